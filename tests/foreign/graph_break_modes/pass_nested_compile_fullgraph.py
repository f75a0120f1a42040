# expect: PASS
# why: a fullgraph=True function calls torch.compile on a helper and calls what it returns; Dynamo treats a nested torch.compile as a no-op and inlines the helper, so nothing breaks the graph (the runtime's stand-in for torch.compile must not be what Dynamo traces)

import torch


def smooth(t):
    return torch.tanh(t) * 0.5 + t.mean()


def blend(x, w):
    fast_smooth = torch.compile(smooth, backend="eager")
    return fast_smooth(x) @ w + 1


compiled_blend = torch.compile(blend, backend="eager", fullgraph=True)
x = torch.linspace(-2, 2, 12).reshape(3, 4)
w = torch.eye(4)[:, :2]
out = compiled_blend(x, w)
torch.testing.assert_close(out, blend(x, w))
print("blended", out.sum().item())
