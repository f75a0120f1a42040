# expect: SPECIALIZATION
# why: forward does self.calls += 1 and uses it, so the int attribute differs on each of 12 calls; Dynamo specialises on it and hits config.recompile_limit (8), then runs eagerly

import torch
import torch.nn as nn


class Stepper(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x + self.calls


m = Stepper()
opt = torch.compile(m, backend="eager")
vals = []
for _ in range(12):
    vals.append(opt(torch.zeros(1)).item())
assert vals == [float(i) for i in range(1, 13)], vals
print("calls:", m.calls, vals[-1])
