# expect: SPECIALIZATION
# why: two instances of one Module class share forward; each gets 5 distinct int k values, interleaved, giving 10 distinct specialised states (> recompile limit 8)

import torch
import torch.nn as nn


class Shift(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        return x + self.k


left, right = Shift(0), Shift(0)
opt_left = torch.compile(left, backend="eager")
opt_right = torch.compile(right, backend="eager")
results = []
for i in range(5):
    left.k = i
    right.k = 100 + i
    results.append(opt_left(torch.zeros(2)).sum().item())
    results.append(opt_right(torch.zeros(2)).sum().item())
assert results == [v for i in range(5) for v in (2.0 * i, 2.0 * (100 + i))], results
print(results)
