# expect: MISMATCH check
# expect on 2.15: PASS
# why: **-unpacking a dict subclass overriding only keys(): CPython ignores the override, Dynamo calls it, so the kwarg count differs and assert_close fails compiled; torch 2.15 fixed it (it ignores the override too)

import torch


class VisibleKeys(dict):
    def keys(self):
        return [k for k in super().keys() if not k.startswith("_")]


def weighted(x, **weights):
    total = x.new_zeros(())
    for name in sorted(weights):
        total = total + weights[name] * x.sum()
    return total + len(weights)


def step(x):
    w = VisibleKeys(alpha=1.0, beta=2.0, _hidden=10.0)
    return weighted(x, **w)


x = torch.ones(3)
expected = step(x)
got = torch.compile(step, backend="eager")(x)
print("expected", expected.item())
torch.testing.assert_close(got, expected)
print("same")
