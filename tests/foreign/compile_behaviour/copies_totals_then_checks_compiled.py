# expect: PASS
# why: the script keeps counters["frames"]["total"] after each call, then asserts Dynamo compiled something: eagerly nothing compiles and the assert fails there, only there; under compilation it holds, and the totals it kept are the compiler's, not the program's

import torch
from torch._dynamo.utils import counters

counters.clear()
totals = []


def leaky(x):
    return torch.where(x > 0, x, 0.1 * x) * 3


opt = torch.compile(leaky, backend="eager")
for n in (3, 3):
    out = opt(torch.linspace(-1, 1, n))
    totals.append(counters["frames"]["total"])
torch.testing.assert_close(out, torch.tensor([-0.3, 0.0, 3.0]))
assert counters["frames"]["total"] >= 1, "nothing was compiled"
print("totals kept:", totals)
