# expect: PASS
# why: defines fn and inputs() like a harness and calls torch.compile(fn, backend="eager")(*inputs()) at module level; the result equals fn(*inputs())

import torch


def fn(x, y, alpha):
    z = torch.where(x > y, x - y, (y - x) * alpha)
    return z.cumsum(0), z.argmax()


def inputs():
    torch.manual_seed(11)
    return torch.randn(6), torch.randn(6), 0.25


out = torch.compile(fn, backend="eager")(*inputs())
ref = fn(*inputs())
torch.testing.assert_close(out[0], ref[0])
assert int(out[1]) == int(ref[1])
print("argmax:", int(out[1]))
