"""F2: .data assignment and in-place updates on parameters, requires_grad_ and detach_ on intermediates."""
import torch


class Decaying(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)
        self.register_buffer("seen", torch.zeros(()))

    def forward(self, x):
        out = self.lin(x)
        self.lin.weight.data = self.lin.weight.data * 0.9
        self.lin.bias.data.add_(0.1)
        self.seen += x.shape[0]
        frozen = out.clone()
        frozen.detach_()
        marker = torch.zeros(2)
        marker.requires_grad_(True)
        res = out + frozen * 0.5 + marker
        return res, frozen.requires_grad, marker.requires_grad, res.requires_grad


fn = Decaying()


def inputs():
    return (torch.randn(4, 3),)


def drive(f):
    x = torch.randn(4, 3)
    outs = []
    for _ in range(3):
        outs.append(f(x))
    with torch.no_grad():
        outs.append(f(x))
    return outs


def state():
    return fn
