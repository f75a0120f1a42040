"""A2: hasattr/getattr with defaults on tensors, nn.Modules and plain user objects inside forward."""
import torch


class Options:
    def __init__(self):
        self.gain = 2.0


class Head(torch.nn.Module):
    def __init__(self, with_norm):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        if with_norm:
            self.norm = torch.nn.LayerNorm(4)
        self.register_buffer("offset", torch.ones(4) * 0.1)
        self.opts = Options()

    def forward(self, x):
        h = self.fc(x)
        if hasattr(self, "norm"):
            h = self.norm(h)
        norm = getattr(self, "norm", None)
        if norm is None:
            h = h * 0.5
        h = h + getattr(self, "offset", 0.0)
        h = h * getattr(self.opts, "gain", 1.0) + getattr(self.opts, "bias", 0.0)
        if hasattr(x, "grad_fn") and x.grad_fn is None:
            h = h + 1
        if not hasattr(x, "not_a_tensor_attr"):
            h = h - getattr(x, "also_missing", 0.25)
        tag = getattr(x, "seed_tag", "none")
        return h, x.ndim, getattr(h, "is_leaf"), tag


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = torch.nn.ModuleList([Head(True), Head(False)])

    def forward(self, x):
        outs = [head(x) for head in self.heads]
        return outs[0][0] + outs[1][0], outs[0][1:], outs[1][3]


fn = Net()


def inputs():
    return (torch.randn(2, 4),)


def drive(f):
    r = [f(*inputs())]
    fn.heads[1].opts.bias = 0.5
    r.append(f(*inputs()))
    t = torch.randn(2, 4)
    t.seed_tag = "tagged"
    r.append(f(t))
    return r
