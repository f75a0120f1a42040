"""A1: conditional field initialisation and __bool__/__len__/__hash__ of half-built objects in forward."""
import torch


class Bucket:
    def __init__(self, items=None, use_mean=False):
        if items:
            self.items = list(items)
        if use_mean:
            self.reduce = "mean"
        # truthiness of the half-built object is consulted during init
        self.ready = bool(self)

    def __len__(self):
        return len(getattr(self, "items", ()))

    def __hash__(self):
        return hash((type(self).__name__, len(self)))

    def __eq__(self, other):
        return isinstance(other, Bucket) and len(self) == len(other)

    def combine(self, x):
        if not hasattr(self, "items"):
            return x
        acc = torch.stack(self.items).sum(0)
        if getattr(self, "reduce", None) == "mean":
            acc = acc / len(self)
        return x + acc


class Pool(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.mode_mean = True

    def forward(self, x):
        h = self.lin(x)
        full = Bucket([h[0], h[1]], use_mean=self.mode_mean)
        empty = Bucket()
        partial = Bucket(items=[h[2]])
        out = h
        for b in (full, empty, partial):
            if b.ready:
                out = b.combine(out)
            else:
                out = out * 0.5
        same = full == partial
        seen = {hash(full) == hash(Bucket([h[0], h[0]])), hash(empty) == hash(Bucket())}
        return out, same, len(seen)


fn = Pool()


def inputs():
    return (torch.randn(3, 4),)


def drive(f):
    results = [f(*inputs())]
    fn.mode_mean = False
    results.append(f(*inputs()))
    return results
