"""G2: torch.func.vmap over a per-sample function, called with changing batch sizes."""
import torch
from torch.func import vmap


def per_sample(x, w):
    h = torch.tanh(w @ x)
    return h.sum() * x[: x.shape[0] // 2].mean() + h


def fn(xs, w):
    out = vmap(per_sample, in_dims=(0, None))(xs, w)
    norms = vmap(torch.linalg.vector_norm)(out)
    return out, norms / xs.shape[0]


def inputs():
    return (torch.randn(3, 4), torch.randn(4, 4))


def drive(f):
    w = torch.randn(4, 4)
    return [f(torch.randn(b, 4), w) for b in (3, 5, 2, 7)]
