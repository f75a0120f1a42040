# expect: PASS
# why: a print() inside the compiled function forces a graph break, which Dynamo records in counters["graph_break"]; the script asserts that record exists

import torch
import torch._dynamo
from torch._dynamo.utils import counters

torch._dynamo.reset()
counters.clear()


def noisy(x):
    y = x.cos()
    print("between the two halves")
    return y.sin()


x = torch.linspace(0, 1, 5)
result = torch.compile(noisy, backend="eager")(x)
torch.testing.assert_close(result, x.cos().sin())

breaks = dict(counters["graph_break"])
assert len(breaks) > 0, "expected Dynamo to record a graph break"
print("graph break recorded:", len(breaks) >= 1)
