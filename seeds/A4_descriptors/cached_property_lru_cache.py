"""A4: functools.cached_property and functools.lru_cache/cache on methods and helpers used inside forward."""
import functools

import torch


@functools.lru_cache(maxsize=None)
def window_size(n):
    return max(1, n // 2)


class Spec:
    def __init__(self, dim):
        self.dim = dim
        self.hits = 0

    @functools.cached_property
    def pattern(self):
        self.hits += 1
        return torch.arange(self.dim, dtype=torch.float32) / self.dim

    @functools.lru_cache(maxsize=4)
    def offset(self, k):
        return 0.1 * k

    @functools.cache
    def label(self):
        return "spec%d" % self.dim


spec = Spec(6)


class Smoother(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(6, 6)

    def forward(self, x):
        h = self.lin(x) + spec.pattern
        w = window_size(x.shape[-1])
        for k in range(w):
            h = h + spec.offset(k) * spec.pattern
        local = Spec(6)
        h = h * local.pattern.sum()
        return h[:, :w], spec.label(), "pattern" in vars(local)


fn = Smoother()


def inputs():
    return (torch.randn(2, 6),)


def drive(f):
    out = [f(*inputs()), f(*inputs())]
    del spec.pattern  # invalidate the cached property between calls
    out.append(f(*inputs()))
    return out


def state():
    return spec.hits
