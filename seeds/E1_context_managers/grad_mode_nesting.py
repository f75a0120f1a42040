"""E1: nested torch.no_grad / enable_grad / set_grad_enabled blocks inside a module forward."""
import torch


class RunningNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.register_buffer("running_mean", torch.zeros(4))
        self.momentum = 0.5

    def forward(self, x, track):
        h = self.proj(x)
        with torch.no_grad():
            batch_mean = h.mean(dim=0)
            self.running_mean.mul_(1 - self.momentum).add_(batch_mean * self.momentum)
            frozen = h * 2
            with torch.enable_grad():
                live = h.tanh()
            inner_flag = torch.is_grad_enabled()
        with torch.set_grad_enabled(track):
            scaled = (h - self.running_mean) * 0.5
            mode_in_block = torch.is_grad_enabled()
        out = scaled + live
        if frozen.requires_grad:
            out = out + 1
        return out, frozen.requires_grad, live.requires_grad, scaled.requires_grad, inner_flag, mode_in_block


fn = RunningNorm()


def inputs():
    return (torch.randn(3, 4, requires_grad=True), False)


def drive(f):
    results = []
    for track in (False, True, False):
        out = f(torch.randn(3, 4, requires_grad=True), track)
        results.append(out)
    with torch.no_grad():
        results.append(f(torch.randn(3, 4), True))
    return results


def state():
    return fn.running_mean.clone()
