# expect: PASS
# why: the traced graph holds exactly three tensor ops (mul, add, relu); the script asserts op_count == 3, true only when Dynamo really compiles

import torch
from torch._dynamo.testing import CompileCounter

cc = CompileCounter()


@torch.compile(backend=cc)
def affine_relu(x, w, b):
    return torch.relu(x * w + b)


x = torch.tensor([-2.0, -0.5, 0.5, 2.0])
out = affine_relu(x, 3.0, torch.ones(4))
print(out)
assert torch.equal(out, torch.tensor([0.0, 0.0, 2.5, 7.0]))
assert cc.frame_count == 1 and cc.op_count == 3, (cc.frame_count, cc.op_count)
print("ops:", cc.op_count)
