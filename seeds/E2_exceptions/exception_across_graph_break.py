"""E2: try/finally and except blocks whose bodies contain a graph break, with exceptions raised after it."""
import torch

LOG = []


class Budget(Exception):
    pass


def noisy_step(x, limit):
    y = x.cos() + 1
    torch._dynamo.graph_break()
    if y.sum().item() > limit:
        raise Budget("over")
    return y


def fn(x, limit):
    out = x.clone()
    try:
        try:
            out = noisy_step(out, limit)
            LOG.append("ok")
        except Budget:
            LOG.append("budget")
            out = out * 0.5
            torch._dynamo.graph_break()
            out = out - 0.1
        finally:
            LOG.append("inner-finally")
            out = out + 0.01
        if out.numel() > 100:
            raise ValueError("too big")
    except ValueError:
        out = torch.zeros_like(out)
    finally:
        LOG.append("outer-finally")
    return out


def inputs():
    return (torch.randn(3, 3), 4.0)


def drive(f):
    x = torch.randn(3, 3)
    return [f(x, 100.0), f(x, -100.0), f(torch.randn(12, 12), 1000.0)]


def state():
    return list(LOG)
