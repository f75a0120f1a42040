# expect: PASS
# why: after torch._dynamo.reset() the cache is empty, so compiling the same function again with a fresh CompileCounter counts one new frame; asserts hold under real compilation

import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounter


def scale_shift(x):
    return x * 3 - 1


x = torch.ones(2, 2)
first = CompileCounter()
f1 = torch.compile(scale_shift, backend=first)
f1(x)
f1(x)
assert first.frame_count == 1, first.frame_count

torch._dynamo.reset()

second = CompileCounter()
f2 = torch.compile(scale_shift, backend=second)
out = f2(x)
assert second.frame_count == 1, second.frame_count
assert first.frame_count == 1
assert torch.equal(out, torch.full((2, 2), 2.0))
print("frames after reset:", second.frame_count)
