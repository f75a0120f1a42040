# expect: PASS
# why: the program compiles with its own AOTAutograd backend, so every tensor a graph makes has one `CompiledFunctionBackward` node where eager has `AddBackward0`, `SigmoidBackward0`...; the printed lines (inside the call, at a graph break, and after it), the grad_fn kept in a global and the repr kept as text differ only in that node's name, which is the backend's choice; values, requires_grad and the gradient agree

import torch
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd


def forward_compiler(gm, example_inputs):
    return make_boxed_func(gm.forward)


aot_backend = aot_autograd(fw_compiler=forward_compiler)


def gate(x, w):
    h = x * w + 1
    print("inside", h)
    return h.sigmoid()


opt = torch.compile(gate, backend=aot_backend)
w = torch.full((3,), 0.5, requires_grad=True)
out = opt(torch.arange(3.0), w)
print("result", out)
last_node = out.grad_fn
shown = repr(out)
out.sum().backward()
print("grad", w.grad)
