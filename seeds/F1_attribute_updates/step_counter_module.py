"""F1: nn.Module forward writes counters, cached tensors and flags onto self; drive edits them between calls."""
import torch


class Accumulator(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.steps = 0
        self.last_out = None
        self.history = []
        self.warm = False

    def forward(self, x):
        h = self.proj(x)
        if self.last_out is not None:
            h = h + 0.5 * self.last_out
        self.steps += 1
        if self.steps > 2:
            self.warm = True
            h = h.relu()
        self.last_out = h.detach()
        self.history.append(self.steps)
        self.tag = "step%d" % self.steps
        return h * self.steps


fn = Accumulator()


def inputs():
    return (torch.randn(3, 4),)


def drive(f):
    outs = []
    x = torch.randn(3, 4)
    for i in range(4):
        outs.append(f(x + i))
        if i == 1:
            fn.last_out = None
        if i == 2:
            fn.steps = 10
    return outs


def state():
    return {
        "steps": fn.steps,
        "warm": fn.warm,
        "history": list(fn.history),
        "tag": fn.tag,
        "last_out": fn.last_out,
    }
