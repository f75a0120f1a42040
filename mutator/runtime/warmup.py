"""Small programs a worker runs once, eagerly and compiled, before it takes any job.

They pull in Dynamo's lazily imported machinery (variable trackers, guards, fake tensors,
symbolic shapes, resume functions, exception handling) so that a forked child starts
warm instead of paying first-use costs on every run.
"""

from __future__ import annotations

from mutator.core.program import Program, ProgramForm

_SOURCES = {
    "warmup/module.py": '''
import torch

class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.scale = 2.0

    def forward(self, x, mask=None):
        h = torch.relu(self.lin(x)) * self.scale
        if mask is not None:
            h = h.masked_fill(mask, 0.0)
        return {"out": h.sum(dim=-1), "parts": [h[0], h[-1]]}

fn = Block()

def inputs():
    return (torch.randn(3, 4), torch.zeros(3, 4, dtype=torch.bool))

def drive(f):
    a = f(*inputs())
    b = f(torch.randn(5, 4))
    return a, b
''',
    "warmup/python.py": '''
import collections
import dataclasses
import itertools
import torch

@dataclasses.dataclass
class Cfg:
    k: int = 2

class Acc:
    def __init__(self):
        self.items = []

    def __len__(self):
        return len(self.items)

acc = Acc()

def helper(t, cfg):
    return t * cfg.k

def fn(x, n):
    d = collections.OrderedDict(a=x, b=x + 1)
    total = sum(v.sum() for v in d.values())
    out = [helper(x, Cfg()) for _ in range(n)]
    for i, (p, q) in enumerate(zip(out, itertools.islice(out, 1, None))):
        total = total + (p - q).abs().sum() * i
    try:
        if x.shape[0] > 2:
            raise KeyError("big")
    except KeyError as exc:
        total = total + len(str(exc))
    acc.items.append(n)
    with torch.no_grad():
        y = x.add_(1) if n > 10 else x + 1
    print("calls", len(acc))
    torch._dynamo.graph_break()
    return total + y.sum() + float(x.mean()) + int(x.size(0))

def inputs():
    return (torch.randn(4, 3), 3)

def drive(f):
    f(*inputs())
    return f(torch.randn(6, 3), 2)

def state():
    return acc.items
''',
}

WARMUP_PROGRAMS = tuple(
    Program(source=source.lstrip(), form=ProgramForm.HARNESS, name=name) for name, source in _SOURCES.items()
)
