"""E3: script-form; a compiled function calls closures from a factory, then closure cells are rebound between calls."""
import torch


def make_layer(scale):
    calls = [0]

    def layer(x):
        calls[0] += 1
        return torch.tanh(x * scale) + calls[0]

    def set_scale(value):
        nonlocal scale
        scale = value

    return layer, set_scale, calls


layer, set_scale, calls = make_layer(0.5)


@torch.compile
def run(x):
    y = layer(x)
    inner = lambda t: layer(t) * 2
    return y + inner(y).mean()


x = torch.arange(6, dtype=torch.float32).reshape(2, 3) / 6
print(round(run(x).sum().item(), 4))
set_scale(2.0)
print(round(run(x).sum().item(), 4))
set_scale(-1.0)
print(round(run(x).sum().item(), 4))
print("calls", calls[0])
