"""G3: same-shaped calls inside and outside CPU autocast, and after a read-only object attribute changes."""
import torch


class Settings:
    def __init__(self):
        self.clip = 1.0
        self.offsets = torch.zeros(4)


SETTINGS = Settings()


class Proj(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x):
        h = torch.mm(x, self.w)
        h = h.clamp(-SETTINGS.clip, SETTINGS.clip) + SETTINGS.offsets
        return h, h.dtype == torch.bfloat16


fn = Proj()


def inputs():
    return (torch.randn(2, 4),)


def drive(f):
    x = torch.randn(2, 4)
    outs = [f(x)]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        outs.append(f(x))
    outs.append(f(x))
    SETTINGS.clip = 0.5
    outs.append(f(x))
    SETTINGS.offsets = torch.arange(4.0)
    outs.append(f(x))
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=False):
        outs.append(f(x))
    return [(h.float(), flag) for h, flag in outs]
