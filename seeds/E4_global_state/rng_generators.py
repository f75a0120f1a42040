"""E4: global RNG via torch.manual_seed and explicitly seeded torch.Generator objects used inside the compiled code."""
import torch


class NoisyDrop(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.gen = torch.Generator().manual_seed(1234)

    def forward(self, x, reseed):
        if reseed:
            torch.manual_seed(7)
        noise = torch.rand(x.shape) * 0.1
        h = self.lin(x + noise)
        mask = torch.rand(4, generator=self.gen) > 0.5
        h = torch.where(mask, h, torch.zeros_like(h))
        jitter = torch.randn(2, 4)
        return h + jitter * 0.01, mask


fn = NoisyDrop()


def inputs():
    return (torch.randn(2, 4), True)


def drive(f):
    outs = []
    x = torch.randn(2, 4)
    outs.append(f(x, True))
    outs.append(f(x, False))
    fn.gen.manual_seed(99)
    outs.append(f(x, True))
    torch.manual_seed(3)
    outs.append(f(x, False))
    outs.append(torch.rand(2))
    return outs


def state():
    return fn.gen.get_state().sum().item(), torch.rand(1)
