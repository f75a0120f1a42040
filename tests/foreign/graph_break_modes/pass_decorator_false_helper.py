# expect: PASS
# why: the helper that prints is decorated with @torch._dynamo.error_on_graph_break(False), so its graph break is allowed even though the caller runs under error_on_graph_break(True)

import torch
import torch._dynamo


@torch._dynamo.error_on_graph_break(False)
def trace_point(t):
    print("checkpoint, sum =", float(t.sum()))
    return t


def body(x):
    h = x.relu()
    h = trace_point(h)
    return h * 10


opt = torch.compile(body, backend="eager")
x = torch.tensor([-1.0, 0.5, 1.5])
with torch._dynamo.error_on_graph_break(True):
    out = opt(x)
torch.testing.assert_close(out, torch.tensor([0.0, 5.0, 15.0]))
print("out", out.tolist())
