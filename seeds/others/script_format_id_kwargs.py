"""Others: script-form reproducer mixing f-string formatting, id() identity checks and keyword-named kwargs under torch.compile."""
import types

import torch

TABLE = types.MappingProxyType({"gain": 1.5, "bias": 0.25})


def combine(x, **kw):
    y = x * kw.get("lambda", 1.0) + kw.get("from", 0.0)
    return y


@torch.compile
def step(x, ref):
    same = id(x) == id(ref)
    y = combine(x, **{"lambda": TABLE["gain"], "from": TABLE["bias"]})
    msg = f"n={y.numel()} same={same} gain={TABLE['gain']:.1f}"
    return y.sum(), msg


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)

    def forward(self, x):
        out = self.lin(x)
        desc = "{0}x{1}".format(*out.shape)
        return out.relu(), desc, f"{out.dim():02d}"


torch.manual_seed(0)
a = torch.randn(4)
s, msg = step(a, a)
print(round(s.item(), 4), msg)
s, msg = step(a, a.clone())
print(round(s.item(), 4), msg)
model = torch.compile(Tiny())
out, desc, dims = model(torch.randn(5, 3))
print(out.shape, desc, dims, round(out.sum().item(), 4))
