"""A3: user __len__/__iter__/__contains__/__getitem__/__bool__ overrides driving control flow in the compiled function."""
import torch


class Window:
    def __init__(self, t, size):
        self.t = t
        self.size = size

    def __len__(self):
        return self.t.shape[0] - self.size + 1

    def __getitem__(self, i):
        if i < 0 or i >= len(self):
            raise IndexError(i)
        return self.t[i:i + self.size]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __contains__(self, k):
        return 0 <= k < len(self)


class Flagged:
    def __init__(self, flags):
        self.flags = flags

    def __bool__(self):
        return any(self.flags)

    def __len__(self):  # __bool__ takes priority over __len__
        return 0


class Legacy:
    """Only __getitem__: iteration falls back to the old sequence protocol."""

    def __init__(self, vals):
        self.vals = vals

    def __getitem__(self, i):
        return self.vals[i]


def fn(x):
    win = Window(x, 3)
    acc = torch.zeros(3, x.shape[1])
    for chunk in win:
        acc = acc + chunk
    hits = sum(1 for k in (0, 2, 5, 9) if k in win)
    if Flagged([False, True]):
        acc = acc * 2
    if not Flagged([False, False]):
        acc = acc - 1
    total = 0.0
    for v in Legacy([0.5, 1.5, 2.0]):
        total += v
    return acc / len(win) + total, hits, list(iter(win))[-1].sum()


def inputs():
    return (torch.randn(6, 2),)
