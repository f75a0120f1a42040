# expect: FULLGRAPH_BREAK Unsupported
# why: the graph break happens inside an error_on_graph_break(True) region nested in an error_on_graph_break(False) region; the innermost setting wins, so Unsupported escapes

import torch
import torch._dynamo


def layered(x):
    with torch._dynamo.error_on_graph_break(False):
        x = x.exp()
        with torch._dynamo.error_on_graph_break(True):
            print("inner strict region")
            x = x.log()
    return x + 1


opt = torch.compile(layered, backend="eager")
out = opt(torch.zeros(3))
torch.testing.assert_close(out, torch.ones(3))
print("ok")
