"""A2: instance attributes that shadow methods (on user objects and an nn.Module) read in the compiled region."""
import torch


class Activation:
    def act(self, x):
        return torch.relu(x)

    def describe(self):
        return "relu"


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(5, 5)

    def extra(self, x):
        return x * 2

    def forward(self, x):
        h = self.lin(x)
        h = self.extra(h)
        return h


def make_acts():
    plain = Activation()
    shadowed = Activation()
    shadowed.act = torch.tanh  # instance attribute wins over the class method
    named = Activation()
    named.describe = "custom"  # a non-callable shadowing a method
    return [plain, shadowed, named]


acts = make_acts()
block = Block()


def fn(x):
    h = block(x)
    for a in acts:
        h = a.act(h)
        if callable(a.describe):
            h = h + len(a.describe())
        else:
            h = h - len(a.describe)
    return h, [type(a.describe).__name__ for a in acts]


def inputs():
    return (torch.randn(2, 5),)


def drive(f):
    res = [f(*inputs())]
    block.extra = lambda t: t - 1.0  # shadow the module method between calls
    res.append(f(*inputs()))
    del block.extra
    res.append(f(*inputs()))
    return res
