"""G3: same-shaped calls under enable_grad, no_grad, set_grad_enabled and inference_mode; checks requires_grad."""
import torch


class Gated(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        h = self.lin(x)
        if torch.is_grad_enabled():
            h = h * 2
        tracked = h.requires_grad
        return h.relu(), tracked


fn = Gated()


def inputs():
    return (torch.randn(2, 3),)


def drive(f):
    x = torch.randn(2, 3)
    outs = [f(x)]
    with torch.no_grad():
        outs.append(f(x))
    outs.append(f(x))
    torch.set_grad_enabled(False)
    try:
        outs.append(f(x))
    finally:
        torch.set_grad_enabled(True)
    with torch.inference_mode():
        out, tracked = f(x)
        outs.append((out.clone(), tracked))
    with torch.enable_grad():
        out, tracked = f(x)
        out.sum().backward()
        outs.append((out, tracked, fn.lin.weight.grad.clone()))
    return outs
