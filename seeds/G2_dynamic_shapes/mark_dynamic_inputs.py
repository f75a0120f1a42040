"""G2: torch._dynamo.mark_dynamic on batch and sequence dims, then sizes used in arithmetic and views."""
import torch


def pad_to_multiple(x, m):
    n = x.shape[1]
    extra = (m - n % m) % m
    if extra:
        x = torch.cat([x, x.new_zeros(x.shape[0], extra)], 1)
    return x


def fn(x, w):
    x = pad_to_multiple(x, 4)
    b, n = x.shape
    blocks = x.view(b, n // 4, 4)
    mixed = blocks @ w
    scores = mixed.sum(-1) / (n // 4)
    return scores, torch.full((b,), float(n))


def inputs():
    return (torch.randn(2, 8), torch.randn(4, 4))


def drive(f):
    w = torch.randn(4, 4)
    outs = []
    for b, n in [(2, 8), (3, 12), (4, 10), (2, 5), (5, 16)]:
        x = torch.randn(b, n)
        torch._dynamo.mark_dynamic(x, 0)
        torch._dynamo.mark_dynamic(x, 1)
        outs.append(f(x, w))
    return outs
