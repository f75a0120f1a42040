# expect: FULLGRAPH_BREAK Unsupported
# why: error_on_graph_break(True) is entered inside the compiled function and a print() (a graph break) happens in that region, so Unsupported escapes the call

import torch
import torch._dynamo


def staged(x):
    x = x + 1
    with torch._dynamo.error_on_graph_break(True):
        x = x * 3
        print("checkpoint")
        x = x - 2
    return x


opt = torch.compile(staged, backend="eager")
out = opt(torch.ones(2))
assert torch.equal(out, torch.full((2,), 4.0))
print(out)
