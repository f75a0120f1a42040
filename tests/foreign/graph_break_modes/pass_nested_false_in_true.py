# expect: PASS
# why: the print() graph break sits in an error_on_graph_break(False) region nested inside error_on_graph_break(True), so it is allowed and nothing is raised

import torch
import torch._dynamo


def guarded(x):
    x = x * 2
    with torch._dynamo.error_on_graph_break(True):
        y = x + 1
        with torch._dynamo.error_on_graph_break(False):
            print("relaxed region, break allowed")
        y = y * y
    return y


opt = torch.compile(guarded, backend="eager")
out = opt(torch.ones(3))
torch.testing.assert_close(out, torch.full((3,), 9.0))
print("value", out.tolist())
