"""G1: options passed as dicts and tuples of scalars whose values change between calls."""
import torch


class Mixer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = torch.nn.Linear(4, 4)

    def forward(self, x, opts, dims):
        h = self.a(x) * opts["wa"] + self.b(x) * opts.get("wb", 1.0)
        if opts.get("residual", False):
            h = h + x
        for d in dims:
            h = h.sum(d, keepdim=True) + h
        return h, len(opts)


fn = Mixer()


def inputs():
    return (torch.randn(2, 4), {"wa": 1.0}, (0,))


def drive(f):
    x = torch.randn(2, 4)
    calls = [
        ({"wa": 1.0}, (0,)),
        ({"wa": 0.5, "wb": 2.0}, (0,)),
        ({"wa": 0.5, "wb": 2.0, "residual": True}, (1,)),
        ({"wa": 1.5, "residual": False}, (0, 1)),
        ({"wa": 1.0}, (0,)),
    ]
    return [f(x, o, d) for o, d in calls]
