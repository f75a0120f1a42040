"""G1: a new config object (dataclass and plain class) is built for every call, with changing field values."""
import dataclasses
import torch


@dataclasses.dataclass
class Cfg:
    alpha: float
    steps: int
    mode: str = "add"


class Extra:
    def __init__(self, shift):
        self.shift = shift


def fn(x, cfg, extra):
    y = x.clone()
    for i in range(cfg.steps):
        if cfg.mode == "add":
            y = y + cfg.alpha * i
        else:
            y = y * cfg.alpha
    if extra is not None:
        y = y - extra.shift
    return y


def inputs():
    return (torch.randn(3), Cfg(0.5, 2), Extra(1.0))


def drive(f):
    x = torch.randn(3)
    outs = []
    for i in range(6):
        cfg = Cfg(alpha=0.5 + (i % 3) * 0.25, steps=1 + i % 2, mode="add" if i < 3 else "mul")
        extra = Extra(float(i)) if i % 2 == 0 else None
        outs.append(f(x, cfg, extra))
    return outs
