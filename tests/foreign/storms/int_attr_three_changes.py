# expect: PASS
# why: a Module int attribute takes 3 distinct values across 9 calls, so Dynamo recompiles only a couple of times (below the limit of 8) and results match eager

import torch
import torch.nn as nn


class Repeat(nn.Module):
    def __init__(self):
        super().__init__()
        self.times = 1

    def forward(self, x):
        for _ in range(self.times):
            x = x * 2
        return x


m = Repeat()
opt = torch.compile(m, backend="eager")
outs = []
for times in (1, 1, 1, 2, 2, 2, 3, 3, 3):
    m.times = times
    outs.append(opt(torch.ones(1)).item())
assert outs == [2.0, 2.0, 2.0, 4.0, 4.0, 4.0, 8.0, 8.0, 8.0], outs
print(outs)
