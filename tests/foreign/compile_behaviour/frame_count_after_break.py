# expect: PASS
# why: a call to a torch._dynamo.disable'd helper splits the function into two compiled frames; the script asserts frame_count == 2 which holds only under real compilation

import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounter


@torch._dynamo.disable
def host_side(t):
    return t.clone()


def pipeline(x):
    a = x + 1
    b = host_side(a)
    return b * a


cc = CompileCounter()
opt = torch.compile(pipeline, backend=cc)
x = torch.arange(3.0)
out = opt(x)
assert torch.equal(out, (x + 1) ** 2)
assert cc.frame_count == 2, cc.frame_count
print("frames:", cc.frame_count)
