"""F2: chained in-place ops on inputs and on aliasing views of inputs (add_, mul_, clamp_, zero_, unsqueeze_)."""
import torch


def normalise_rows(t):
    row = t[0]
    row.mul_(2.0).add_(1.0)
    return row


def fn(x, y):
    r = normalise_rows(x)
    tail = x[:, 1:]
    tail.clamp_(min=-0.5, max=0.5)
    y.unsqueeze_(0)
    y.add_(r.sum())
    col = x.select(1, 0)
    col.zero_()
    z = x.t()
    z.add_(y.squeeze(0)[: x.shape[1]].unsqueeze(1))
    out = x.sum() + y.mean()
    x.mul_(3)
    return out, r, y.shape


def inputs():
    return (torch.randn(3, 4), torch.randn(5))
