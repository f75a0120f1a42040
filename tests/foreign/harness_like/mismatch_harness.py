# expect: MISMATCH check
# why: fn takes a different reduction when torch.compiler.is_compiling() is True, so the module-level assert_close against fn(*inputs()) fails only compiled

import torch


def fn(x, w):
    y = x @ w
    if torch.compiler.is_compiling():
        return y.amax(dim=-1)
    return y.mean(dim=-1)


def inputs():
    torch.manual_seed(21)
    return torch.randn(3, 4), torch.randn(4, 5)


expected = fn(*inputs())
actual = torch.compile(fn, backend="eager")(*inputs())
print("expected shape:", tuple(expected.shape))
torch.testing.assert_close(actual, expected)
print("harness check passed")
