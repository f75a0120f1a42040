"""G3: script that deletes and recreates modules and closures (possible id() reuse) between same-shaped compiled calls."""
import torch

torch.manual_seed(0)


class Scale(torch.nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor
        self.bias = torch.nn.Parameter(torch.full((3,), factor))

    def forward(self, x):
        return x * self.factor + self.bias


def make_act(k):
    def act(t):
        return torch.tanh(t * k)
    return act


@torch.compile
def apply(mod, act, x, cache):
    h = act(mod(x))
    cache["last"] = h.sum()
    return h


x = torch.randn(2, 3)
cache = {}
for step in range(4):
    mod = Scale(0.5 + step)
    act = make_act(1.0 + 0.25 * (step % 2))
    out = apply(mod, act, x, cache)
    print(step, tuple(out.shape), round(out.sum().item(), 4), round(cache["last"].item(), 4))
    del mod, act

m = Scale(2.0)
a = make_act(0.5)
print("same", round(apply(m, a, x, cache).sum().item(), 4))
m.factor = -1.0
print("factor", round(apply(m, a, x, cache).sum().item(), 4))
with torch.no_grad():
    m.bias.zero_()
print("bias", round(apply(m, a, x, cache).sum().item(), 4))
