"""E4: torch.set_default_dtype changed between calls and inside the compiled function, affecting factory ops."""
import torch


def build(n):
    base = torch.ones(n)
    ramp = torch.arange(0.0, n) / n
    lit = torch.tensor([0.1, 0.2, 0.3])[:n]
    return base + ramp + lit


def fn(x):
    y = build(3) * x
    dt_before = torch.get_default_dtype()
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    z = torch.full((3,), 0.1) + torch.linspace(0.0, 1.0, 3)
    torch.set_default_dtype(old)
    w = torch.zeros(3) + 1 / 3
    return y, z, w, str(dt_before), str(z.dtype), str(w.dtype)


def inputs():
    return (torch.randn(3),)


def drive(f):
    outs = []
    try:
        outs.append(f(torch.randn(3)))
        torch.set_default_dtype(torch.float64)
        outs.append(f(torch.randn(3, dtype=torch.float64)))
        outs.append(f(torch.randn(3)))
    finally:
        torch.set_default_dtype(torch.float32)
    outs.append(f(torch.randn(3)))
    return outs
