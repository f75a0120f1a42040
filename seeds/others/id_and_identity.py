"""Others: id() of modules, tensors and objects used for identity maps and comparisons inside the compiled region."""
import torch


class Cache:
    """An identity map that compares id()s but stores the objects, so its state is printable."""

    def __init__(self):
        self.slots = []

    def lookup(self, obj, default):
        for held, value in self.slots:
            if id(held) == id(obj):
                return value
        return default

    def store(self, obj, value):
        for i, (held, _) in enumerate(self.slots):
            if id(held) == id(obj):
                self.slots[i] = (held, value)
                return
        self.slots.append((obj, value))


cache = Cache()


class Tied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Linear(4, 4)
        self.dec = torch.nn.Linear(4, 4)
        self.dec.weight = self.enc.weight  # tied parameters
        self.blocks = [self.enc, self.dec, self.enc]

    def forward(self, x):
        seen = set()
        h = x
        for m in self.blocks:
            if id(m) in seen:
                h = h * 0.5
            seen.add(id(m))
            h = m(h)
        tied = id(self.enc.weight) == id(self.dec.weight)
        scale = cache.lookup(self, 1.0)
        cache.store(self.enc, 2.0)
        y = h * scale
        alias = x
        return y, tied, id(alias) == id(x), len(seen), id(self.enc) != id(self.dec)


fn = Tied()


def inputs():
    return (torch.randn(2, 4),)


def drive(f):
    out = [f(*inputs())]
    cache.store(fn, 3.0)
    out.append(f(*inputs()))
    return out


def state():
    return sorted(value for _, value in cache.slots)
