# expect: MISMATCH check
# why: the backend keeps the GraphModule Dynamo gives it in a global (the compiler's output, not compared), but the function also computes another value when compiled (is_compiling() adds 1), so the program's own assert_close of the result fails only under compilation

import torch

CAPTURED = None


def capture(gm, example_inputs):
    global CAPTURED
    CAPTURED = gm
    return gm.forward


def rescale(x):
    out = x / x.abs().max()
    if torch.compiler.is_compiling():
        out = out + 1
    return out


fast = torch.compile(rescale, backend=capture)
x = torch.tensor([3.0, -6.0, 1.5])
torch.testing.assert_close(fast(x), torch.tensor([0.5, -1.0, 0.25]))
