"""B2: **-unpacking of a custom collections.abc.Mapping (and a dict subclass) into calls and dict displays."""
import collections.abc
import torch


class LayerConfig(collections.abc.Mapping):
    def __init__(self, **kw):
        self._data = dict(kw)
        self.reads = 0

    def __getitem__(self, key):
        self.reads += 1
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)


class Overrides(dict):
    def keys(self):
        return [k for k in super().keys() if not k.startswith("_")]


def block(x, scale=1.0, shift=0.0, act="relu", depth=1, **extra):
    x = x + len(extra)
    for _ in range(depth):
        x = x * scale + shift
        x = torch.relu(x) if act == "relu" else torch.tanh(x)
    return x


CFG = LayerConfig(scale=0.5, shift=0.25, depth=2)


def fn(x):
    y = block(x, **CFG)
    ov = Overrides(act="tanh", _hidden=3)
    z = block(x, **CFG, **ov)
    merged = {**CFG, "depth": 1, **ov}
    w = block(x, **merged)
    return y + z - w, sorted(merged), len(merged)


def state():
    return CFG.reads


def inputs():
    return (torch.randn(2, 4),)
