# expect: PASS
# why: every round starts from cleared compiler state (counters.clear(), and torch._dynamo.reset() with a fresh CompileCounter every other round), then copies counters["frames"].get("total", 0), the "stats" category's items and the counter's frame_count into its own list and checks that list; what it copied is Dynamo's state however it was reset (nothing compiles eagerly), only the outputs are the program's

import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounter
from torch._dynamo.utils import counters

rounds = []
outs = []


def blend(x, y):
    return torch.where(x > y, x - y, y * 0.5)


for step in range(4):
    counters.clear()
    if step % 2 == 0:
        torch._dynamo.reset()
    cnt = CompileCounter()
    opt = torch.compile(blend, backend=cnt)
    outs.append(opt(torch.arange(5.0) + step, torch.full((5,), 2.0)))
    rounds.append((counters["frames"].get("total", 0),
                   tuple(sorted(counters.get("stats", {}).items())),
                   cnt.frame_count))

assert len(rounds) == 4 and all(frames >= 0 for frames, _, _ in rounds), rounds
for step, out in enumerate(outs):
    x = torch.arange(5.0) + step
    torch.testing.assert_close(out, torch.where(x > 2.0, x - 2.0, torch.ones(5)))
print("rounds:", len(rounds), "outputs:", [round(o.sum().item(), 2) for o in outs])
