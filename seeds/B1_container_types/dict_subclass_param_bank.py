"""B1: a dict subclass with __missing__ and helper methods, plus keys()/items() views, inside a Module's forward."""
import torch


class ScaleBank(dict):
    """dict subclass: unknown keys fall back to a default scale."""

    def __missing__(self, key):
        return 1.0

    def total(self):
        return sum(self.values())

    def scaled(self, name, x):
        return x * self[name]


class Mixer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.bank = ScaleBank(a=0.5, b=2.0, c=-1.0)

    def forward(self, x, names):
        h = self.lin(x)
        out = torch.zeros_like(h)
        for n in names:
            out = out + self.bank.scaled(n, h)
        shared = self.bank.keys() & set(names)
        extra = sorted(set(names) - self.bank.keys())
        for k, v in sorted(self.bank.items()):
            if k in shared:
                out = out + v * 0.1
        out = out * self.bank.total() + len(extra)
        return out, sorted(shared), extra, isinstance(self.bank, dict)


fn = Mixer()


def inputs():
    return (torch.randn(3, 4), ["a", "c", "z"])
