"""F1: class attribute counters and modes mutated inside forward and between calls, with instance shadowing."""
import torch


class Block(torch.nn.Module):
    instances_called = 0
    mode = "sum"
    gain = 1.0

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        type(self).instances_called += 1
        y = self.lin(x) * self.gain
        if Block.mode == "sum":
            return y + x
        return y * x


class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(), Block()])

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        Block.gain = Block.gain * 0.5
        return x


fn = Stack()


def inputs():
    return (torch.randn(2, 3),)


def drive(f):
    x = torch.randn(2, 3)
    outs = [f(x)]
    Block.mode = "mul"
    outs.append(f(x))
    fn.blocks[1].gain = 3.0
    outs.append(f(x))
    del fn.blocks[1].gain
    Block.mode = "sum"
    outs.append(f(x))
    return outs


def state():
    return {"called": Block.instances_called, "gain": Block.gain, "mode": Block.mode}
