# expect: INVALID
# why: the script asserts the sum of x*2 over arange(4) is 10, but it is 12; the wrong assert is outside the compiled function and fails in both runs

import torch


def double(x):
    return x * 2


x = torch.arange(4.0)
out = torch.compile(double, backend="eager")(x)
torch.testing.assert_close(out, x * 2)
assert out.sum().item() == 10.0, out.sum().item()
print("sum ok")
