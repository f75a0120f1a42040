# expect: MISMATCH check
# why: the function adds 1 only when torch.compiler.is_compiling() is True, so assert_close fails only in the compiled run

import torch

torch.manual_seed(3)


def normalize(x):
    y = (x - x.mean()) / (x.std() + 1e-5)
    if torch.compiler.is_compiling():
        return y + 1
    return y


x = torch.randn(10)
eager_out = normalize(x)
compiled_out = torch.compile(normalize, backend="eager")(x)
print("means:", round(float(eager_out.mean()), 4))
torch.testing.assert_close(compiled_out, eager_out)
print("normalize agrees")
