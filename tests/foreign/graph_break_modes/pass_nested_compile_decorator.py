# expect: PASS
# why: the decorator forms: an outer @torch.compile(fullgraph=True) function defines a helper under a bare @torch.compile and calls it in a loop; Dynamo makes the nested torch.compile a no-op and inlines the helper, so the outer graph stays whole

import torch


@torch.compile(backend="eager", fullgraph=True)
def accumulate(xs):
    @torch.compile
    def step(acc, x):
        return acc * 0.9 + x.relu()

    acc = torch.zeros_like(xs[0])
    for x in xs:
        acc = step(acc, x)
    return acc


batch = torch.arange(-6.0, 6.0).reshape(4, 3)
result = accumulate(batch)
print("acc", result)
assert result.shape == (3,)
