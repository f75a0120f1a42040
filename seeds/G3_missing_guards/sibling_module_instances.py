"""G3: one compiled function applied to two instances of the same module class whose params and attrs diverge."""
import torch


class Cell(torch.nn.Module):
    def __init__(self, act):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.act = act
        self.gain = 1.0

    def forward(self, x):
        return self.act(self.lin(x)) * self.gain


def fn(cell, x):
    h = cell(x)
    return h + cell.lin.bias


A = Cell(torch.relu)
B = Cell(torch.relu)


def inputs():
    return (A, torch.randn(2, 4))


def drive(f):
    x = torch.randn(2, 4)
    outs = [f(A, x), f(B, x)]
    with torch.no_grad():
        B.lin.weight.mul_(-1.0)
        B.lin.bias.fill_(0.5)
    outs.append(f(B, x))
    B.lin.weight = torch.nn.Parameter(torch.ones(4, 4))
    outs.append(f(B, x))
    B.gain = 3.0
    outs.append(f(B, x))
    B.act = torch.sigmoid
    outs.append(f(B, x))
    outs.append(f(A, x))
    return outs


def state():
    return {"A": A, "B": B}
