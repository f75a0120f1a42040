# expect: PASS
# why: a CompileCounter backend's frame_count and op_count are stored, next to the model's own output, into a dict global after each call; the counts are the compiler's (zero eagerly), only the outputs are the program's

import torch
from torch._dynamo.testing import CompileCounter


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(3, 2)

    def forward(self, x):
        return torch.sigmoid(self.proj(x)) * x[:, :2]


torch.manual_seed(0)
cnt = CompileCounter()
model = torch.compile(Gate(), backend=cnt)
seen = {}
for rows in (4, 4, 8):
    y = model(torch.randn(rows, 3))
    seen[rows] = {"frames": cnt.frame_count, "ops": cnt.op_count, "total": round(y.sum().item(), 4)}

assert seen[4]["frames"] <= seen[8]["frames"], seen
print("sizes seen:", sorted(seen), "frames by size:", {k: v["frames"] for k, v in seen.items()})
