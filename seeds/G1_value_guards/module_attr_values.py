"""G1: float, int and bool attributes of an nn.Module changed between calls (temperature, top_k, flags)."""
import torch


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(6, 6)
        self.temperature = 1.0
        self.top_k = 3
        self.normalize = True

    def forward(self, x):
        logits = self.lin(x) / self.temperature
        vals, idx = logits.topk(self.top_k, dim=-1)
        if self.normalize:
            vals = vals.softmax(-1)
        return vals, idx


fn = Head()


def inputs():
    return (torch.randn(2, 6),)


def drive(f):
    x = torch.randn(2, 6)
    outs = []
    for t, k, n in [(1.0, 3, True), (0.5, 3, True), (2.0, 2, False), (0.5, 4, True), (1.0, 3, True)]:
        fn.temperature = t
        fn.top_k = k
        fn.normalize = n
        outs.append(f(x))
    return outs
