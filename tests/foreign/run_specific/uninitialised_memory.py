# expect: PASS
# why: the compiled function returns a tensor made with torch.empty next to computed values; uninitialised memory is filled deterministically in both runs, so it is never a difference

import torch


def scratch(x):
    buf = torch.empty(x.shape[0], 3)
    buf[:, 0] = x
    return buf, x.sum()


opt = torch.compile(scratch, backend="eager")
first, total = opt(torch.arange(4.0))
assert first.shape == (4, 3)
assert torch.equal(first[:, 0], torch.arange(4.0))
print("total", total.item())
