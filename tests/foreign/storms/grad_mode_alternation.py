# expect: PASS
# why: alternating torch.no_grad() and grad-enabled calls gives Dynamo two grad-mode guards it reuses; values and requires_grad agree with eager

import torch

w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)


def weighted(x):
    return (x * w).sum()


opt = torch.compile(weighted, backend="eager")
x = torch.tensor([1.0, 2.0, 3.0])
flags = []
for i in range(6):
    if i % 2:
        with torch.no_grad():
            out = opt(x)
    else:
        out = opt(x)
    flags.append(out.requires_grad)
    assert out.item() == 4.5
out = opt(x)
out.backward()
print(flags, w.grad.tolist())
