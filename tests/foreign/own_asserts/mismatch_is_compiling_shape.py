# expect: MISMATCH check
# why: under compilation the function keeps an extra dim via is_compiling(), so the script's shape assert fails only compiled

import torch


def pool(x):
    s = x.sum(dim=1, keepdim=torch.compiler.is_compiling())
    return s * 0.5


x = torch.ones(3, 4)
ref = pool(x)
out = torch.compile(pool, backend="eager")(x)
print("reference shape", tuple(ref.shape))
assert out.shape == ref.shape == (3,), out.shape
assert torch.allclose(out, ref)
print("pool ok")
