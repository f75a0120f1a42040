"""B2: a Module mutates its own dict/list state while iterating over copies, across repeated calls driven from outside."""
import torch

HISTORY = []


class RunningBuffers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.slots = {"x0": torch.zeros(3)}
        self.queue = [1.0, 2.0]

    def forward(self, x):
        h = self.lin(x).sum(0)
        for key, val in list(self.slots.items()):
            self.slots[key + "_n"] = val + h
            if key.count("_n") >= 1:
                self.slots.pop(key)
        for item in self.queue[:]:
            if item > 1.5:
                self.queue.remove(item)
                self.queue.append(item / 2)
        self.queue.insert(0, float(len(self.slots)))
        HISTORY.append(len(self.queue))
        acc = h * sum(self.queue)
        for k in sorted(self.slots):
            acc = acc + self.slots[k]
        return acc


fn = RunningBuffers()


def inputs():
    return (torch.randn(2, 3),)


def drive(f):
    outs = []
    for i in range(3):
        outs.append(f(torch.randn(2, 3)))
        if i == 1:
            fn.queue.append(5.0)
    return outs


def state():
    return sorted(fn.slots), list(fn.queue), list(HISTORY)
