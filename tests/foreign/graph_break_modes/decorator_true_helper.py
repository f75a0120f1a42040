# expect: FULLGRAPH_BREAK Unsupported
# why: a helper decorated with @torch._dynamo.error_on_graph_break(True) prints while being inlined in the compiled function, so the graph break raises Unsupported

import torch
import torch._dynamo


@torch._dynamo.error_on_graph_break(True)
def checked_norm(t):
    n = t.norm()
    print("norm computed")
    return t / n


def unit_rows(m):
    return torch.stack([checked_norm(r) for r in m])


opt = torch.compile(unit_rows, backend="eager")
m = torch.tensor([[3.0, 4.0], [0.0, 2.0]])
out = opt(m)
print(out)
