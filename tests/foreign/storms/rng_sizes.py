# expect: PASS
# why: sizes come from torch.randint with a fixed seed, so the sequence is deterministic; Dynamo goes dynamic after the first change and results match eager

import torch

torch.manual_seed(123)


def centered(x):
    return x - x.mean(dim=0, keepdim=True)


opt = torch.compile(centered, backend="eager")
sizes = []
for _ in range(6):
    n = int(torch.randint(2, 9, (1,)).item())
    sizes.append(n)
    x = torch.arange(n * 2, dtype=torch.float32).view(n, 2)
    got = opt(x)
    torch.testing.assert_close(got, centered(x))
print("sizes:", sizes)
