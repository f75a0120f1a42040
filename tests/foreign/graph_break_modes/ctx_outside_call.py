# expect: FULLGRAPH_BREAK Unsupported
# why: the compiled call runs inside `with torch._dynamo.error_on_graph_break(True):` and the function prints, so the graph break raises Unsupported out of the call

import torch
import torch._dynamo


def log_and_double(x):
    print("doubling", x.numel(), "values")
    return x * 2


opt = torch.compile(log_and_double, backend="eager")
x = torch.arange(4.0)
with torch._dynamo.error_on_graph_break(True):
    y = opt(x)
assert torch.equal(y, x * 2)
print("finished", y.tolist())
