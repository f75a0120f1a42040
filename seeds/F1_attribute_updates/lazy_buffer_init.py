"""F1: lazy initialisation of a buffer and a plain attribute on the first forward call, then running updates."""
import torch


class LazyNorm(torch.nn.Module):
    def __init__(self, momentum=0.25):
        super().__init__()
        self.momentum = momentum
        self.scale = torch.nn.Parameter(torch.ones(5))

    def _init_stats(self, x):
        self.register_buffer("running_mean", x.mean(0).detach().clone())
        self.feature_dim = x.shape[-1]
        self.num_updates = 0

    def forward(self, x):
        if not hasattr(self, "running_mean"):
            self._init_stats(x)
        batch_mean = x.mean(0)
        self.running_mean.mul_(1 - self.momentum).add_(self.momentum * batch_mean.detach())
        self.num_updates = self.num_updates + 1
        centered = x - self.running_mean
        return centered * self.scale[: self.feature_dim]


fn = LazyNorm()


def inputs():
    return (torch.randn(4, 5),)


def drive(f):
    outs = []
    for i in range(3):
        outs.append(f(torch.randn(4, 5) * (i + 1)))
    del fn.running_mean
    outs.append(f(torch.randn(4, 5)))
    return outs


def state():
    return {"running_mean": fn.running_mean, "n": fn.num_updates, "dim": fn.feature_dim}
