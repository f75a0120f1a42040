# expect: MISMATCH
# why: under the program's own AOTAutograd backend the tensor printed inside the call carries another value when compiled (is_compiling() adds 1) as well as another grad_fn name; the node's name is not compared, the printed values still are, so the line differs though the returned value agrees

import torch
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd


def forward_compiler(gm, example_inputs):
    return make_boxed_func(gm.forward)


def damp(x, w):
    h = x * w
    if torch.compiler.is_compiling():
        h = h + 1
    print("inside", h)
    return (h * 0).sum() + w.sum()


opt = torch.compile(damp, backend=aot_autograd(fw_compiler=forward_compiler))
w = torch.ones(4, requires_grad=True)
print("total", opt(torch.arange(4.0), w))
