"""D: Python scalars <-> 0-d tensors: float()/int()/bool() of tensors, .item(), torch.tensor(py scalar) and mixed arithmetic."""
import math
import torch


class Normalizer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.eps = 1e-3

    def forward(self, x, temp):
        h = self.lin(x)
        scale = h.abs().max()
        s = float(scale) + self.eps
        k = int(torch.tensor(2.7))
        flag = bool(h.sum() > 0)
        t = torch.tensor(temp) * 2
        out = h / s * k
        if flag:
            out = out + t
        else:
            out = out - t
        out = out * math.sqrt(k) + torch.tensor(1, dtype=torch.float32)
        half = (x.mean() * 0.5).item()
        return out + half, k, flag, round(s, 3)


fn = Normalizer()


def inputs():
    return (torch.randn(2, 4), 0.25)


def drive(f):
    outs = [f(torch.randn(2, 4), 0.25)]
    outs.append(f(torch.randn(2, 4), 1.5))
    outs.append(f(-torch.ones(2, 4) * 3, torch.tensor(0.5)))
    return outs
