# expect: PASS
# why: after each call the script copies counters["frames"] into its own list, checks the list itself and prints from it; what it copied is Dynamo's state (nothing compiles eagerly, so it reads otherwise there), not the program's, wherever it went

import torch
from torch._dynamo.utils import counters

counters.clear()
profiles = []
outs = []


def smooth(x):
    return (x[1:] + x[:-1]) / 2


opt = torch.compile(smooth, backend="eager")
for shift in range(3):
    outs.append(opt(torch.arange(6.0) + shift))
    profiles.append(tuple(sorted(counters["frames"].items())))

assert profiles[1] == profiles[2], f"recompiled on the third call: {profiles}"
for shift, out in enumerate(outs):
    torch.testing.assert_close(out, torch.arange(5.0) + 0.5 + shift)
print("profiles kept:", len(profiles), "last:", profiles[-1])
