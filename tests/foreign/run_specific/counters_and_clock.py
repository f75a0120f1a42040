# expect: PASS
# why: counters imported at module level and raw time.time() stamps stored in globals are torch-owned / run-specific; the program's own values match eager

import time
import torch
from torch._dynamo.utils import counters

counters.clear()
started = time.time()
stamps = []


def poly(x):
    return 3 * x ** 2 - 2 * x + 1


opt = torch.compile(poly, backend="eager")
outs = []
for n in (2, 2, 2):
    stamps.append(time.time())
    outs.append(opt(torch.arange(float(n))))

for o in outs:
    assert torch.equal(o, torch.tensor([1.0, 2.0]))
print("calls:", len(stamps), "values:", outs[0].tolist())
