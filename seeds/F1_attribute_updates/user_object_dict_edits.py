"""F1: setattr, delattr and __dict__ edits on a user object inside the compiled function."""
import torch


class Scratch:
    def __init__(self):
        self.scale = 2.0
        self.tmp = torch.zeros(3)
        self.log = []


def fn(x, obj):
    y = x * obj.scale
    if hasattr(obj, "tmp"):
        y = y + obj.tmp
        del obj.tmp
    obj.__dict__["peak"] = y.max()
    setattr(obj, "scale", obj.scale + 1.0)
    if "bias" in obj.__dict__:
        y = y - obj.bias
    else:
        obj.bias = y.mean()
    obj.__dict__.update({"calls": obj.__dict__.get("calls", 0) + 1})
    vars(obj).setdefault("first_sum", y.sum())
    object.__setattr__(obj, "shape_seen", tuple(y.shape))
    obj.log.append(obj.scale)
    return y.sum(0)


OBJ = Scratch()


def inputs():
    return (torch.randn(2, 3), OBJ)


def drive(f):
    outs = []
    x = torch.randn(2, 3)
    for i in range(3):
        outs.append(f(x, OBJ))
        if i == 0:
            OBJ.tmp = torch.ones(3) * 5
        if i == 1:
            OBJ.__dict__.pop("bias")
    return outs


def state():
    return {k: v for k, v in sorted(vars(OBJ).items())}
