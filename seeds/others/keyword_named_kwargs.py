"""Others: kwargs whose names are Python keywords or builtins, passed via ** unpacking through helpers and a module."""
import torch


def blend(x, **kw):
    out = x
    if "from" in kw:
        out = out + kw["from"]
    if kw.get("lambda", None) is not None:
        out = out * kw["lambda"]
    for name in ("class", "if", "def"):
        if name in kw:
            out = out - kw[name] * len(name)
    return out


def route(x, *, len=2, type="sum", id=0, **rest):
    y = blend(x, **rest)
    if type == "sum":
        return y.sum(dim=-1)[:len] + id
    return y.mean(dim=-1)[:len] - id


class Router(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.opts = {"from": 0.5, "lambda": 2.0, "class": 0.1}

    def forward(self, x, mode):
        h = self.lin(x)
        extra = {"if": 0.25, "len": 3, "type": mode, **self.opts}
        a = route(h, **extra)
        b = route(h, **{"def": 1.0, "id": 7, "in": 3})
        c = blend(h, **dict(extra, **{"lambda": None}))
        return a, b, c.abs().max()


fn = Router()


def inputs():
    return (torch.randn(3, 4), "sum")


def drive(f):
    out = [f(*inputs())]
    out.append(f(torch.randn(3, 4), "mean"))
    fn.opts["while"] = 1.0
    out.append(f(*inputs()))
    return out
