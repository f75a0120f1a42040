# expect: PASS
# why: three calls with the same input shape must reuse one compiled frame; the CompileCounter assert holds under real compilation (it can only fail eagerly, where nothing compiles)

import torch
from torch._dynamo.testing import CompileCounter

counter = CompileCounter()


def gelu_ish(x):
    return 0.5 * x * (1 + torch.tanh(0.79788456 * (x + 0.044715 * x ** 3)))


opt = torch.compile(gelu_ish, backend=counter)
torch.manual_seed(0)
for _ in range(3):
    x = torch.randn(8)
    torch.testing.assert_close(opt(x), gelu_ish(x))

assert counter.frame_count == 1, counter.frame_count
print("compiled frames:", counter.frame_count)
