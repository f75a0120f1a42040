# expect: PASS
# why: plain dict building, ** unpacking and kwargs defaults are traced faithfully, so assert_close passes in both runs

import torch


def combine(base, *, scale=1.0, bias=0.0, clamp=None):
    out = base * scale + bias
    if clamp is not None:
        out = out.clamp(-clamp, clamp)
    return out


def run(x, options):
    opts = {"scale": 2.0}
    opts.update(options)
    parts = [combine(x, **opts), combine(x, bias=1.0)]
    return torch.stack(parts), sorted(opts)


x = torch.linspace(-3, 3, 7)
options = {"bias": 0.5, "clamp": 2.0}
expected, expected_keys = run(x, options)
actual, actual_keys = torch.compile(run, backend="eager")(x, options)
torch.testing.assert_close(actual, expected)
assert actual_keys == expected_keys, (actual_keys, expected_keys)
print(actual_keys)
