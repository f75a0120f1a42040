"""G2: nn.Module called with changing batch sizes; floor division, modulo and computed reshape sizes."""
import torch


class Chunker(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        b = x.shape[0]
        h = self.lin(x)
        half = b // 2
        rem = b % 2
        paired = h[: half * 2].reshape(half, 8)
        tail = h[half * 2 :]
        pooled = paired.sum(-1, keepdim=True).expand(half, 4)
        if rem:
            pooled = torch.cat([pooled, tail], 0)
        flat = h.reshape(-1)
        return pooled, flat.view(b * 2, 2).mean(1), half, rem


fn = Chunker()


def inputs():
    return (torch.randn(4, 4),)


def drive(f):
    return [f(torch.randn(b, 4)) for b in (4, 6, 5, 8, 3, 6)]
