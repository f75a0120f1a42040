# expect: MISMATCH
# why: the instance attribute set inside the compiled describe() comes first in dict(box.__dict__.items()) under Dynamo (['c', 'a', 'b'], eagerly ['a', 'b', 'c']): the call's result differs; the frame totals and "stats" items the script copies after clearing the counters every round are the compiler's state and stay out of the report

import torch
from torch._dynamo.utils import counters


class Box:
    def __init__(self):
        self.a = 1
        self.b = 2


def scale(x):
    return x * 2


def describe(x, box):
    box.c = 3
    return x + 1, list(dict(box.__dict__.items()))


copied = []
opt_scale = torch.compile(scale, backend="eager")
opt_describe = torch.compile(describe, backend="eager")
x = torch.arange(4.0)
for _ in range(3):
    counters.clear()
    x = opt_scale(x)
    copied.append((counters["frames"].get("total", 0), tuple(sorted(counters.get("stats", {}).items()))))
counters.clear()
y, keys = opt_describe(x, Box())
copied.append(counters["frames"].get("total", 0))
print("keys:", keys, "values:", y.tolist(), "rounds:", len(copied))
