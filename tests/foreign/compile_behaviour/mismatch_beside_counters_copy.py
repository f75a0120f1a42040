# expect: MISMATCH
# why: format(7, "03d") inside the compiled tag() ignores the spec under Dynamo ('batch-7', eagerly 'batch-007'): the third call's result differs; the counters["frames"] totals the script copies after each call (they differ from the second call on, before it) are the compiler's state and stay out of the report

import torch
from torch._dynamo.utils import counters

counters.clear()
frames_seen = []


def scale(x):
    return x * 2


def tag(x):
    return x + 1, "batch-" + format(7, "03d")


opt_scale = torch.compile(scale, backend="eager")
opt_tag = torch.compile(tag, backend="eager")
x = torch.arange(4.0)
for _ in range(2):
    x = opt_scale(x)
    frames_seen.append(counters["frames"]["total"])
y, label = opt_tag(x)
frames_seen.append(counters["frames"]["total"])
print("label:", label, "values:", y.tolist())
