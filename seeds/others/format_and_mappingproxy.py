"""Others: format()/f-strings/str.format with specs and types.MappingProxyType / class __dict__ reads in the compiled function."""
import types

import torch

DEFAULTS = types.MappingProxyType({"scale": 2.0, "shift": -1.0, "name": "layer"})


class Cfg:
    depth = 3
    act = "relu"


def tag(prefix, i, value):
    return f"{prefix}_{i:02d}:{value:.2f}|{format(i, 'b')}|{'{:>4}'.format(prefix)}"


def fn(x, overrides):
    params = types.MappingProxyType(dict(DEFAULTS, **overrides))
    h = x * params["scale"] + params.get("shift", 0.0)
    names = []
    for i in range(Cfg.__dict__["depth"]):
        h = torch.relu(h) if Cfg.__dict__.get("act") == "relu" else torch.tanh(h)
        names.append(tag(params["name"], i, 1.5 * i))
    keys = sorted(k for k in params.keys() if k != "name")
    h = h + len(keys)
    label = "{}-{}".format(params["name"], format(len(names), "03d"))
    ratio = f"{h.shape[0] / 3:.3f}"
    return h, names, label, ratio, "scale" in DEFAULTS, list(DEFAULTS.items())


def inputs():
    return (torch.randn(3, 4), {"scale": 0.5})


def drive(f):
    out = [f(*inputs())]
    out.append(f(torch.randn(3, 4), {"name": "blk", "shift": 1.0}))
    Cfg.act = "tanh"
    out.append(f(*inputs()))
    Cfg.act = "relu"
    return out
