# expect: FULLGRAPH_BREAK Unsupported
# why: print() inside a fullgraph=True compiled function is a graph break, so Unsupported escapes the compiled call uncaught

import torch


def report_and_scale(x):
    y = x * 4
    print("scaled", y.shape)
    return y - 1


opt = torch.compile(report_and_scale, backend="eager", fullgraph=True)
out = opt(torch.ones(2, 3))
assert torch.equal(out, torch.full((2, 3), 3.0))
print("done")
