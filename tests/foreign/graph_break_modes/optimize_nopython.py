# expect: FULLGRAPH_BREAK Unsupported
# why: torch._dynamo.optimize("eager", nopython=True) forbids graph breaks and the decorated function prints (a graph break), so Unsupported escapes

import torch
import torch._dynamo


@torch._dynamo.optimize("eager", nopython=True)
def two_halves(x):
    a = x.sin()
    print("halfway")
    return a + x.cos()


x = torch.zeros(3)
out = two_halves(x)
assert torch.equal(out, torch.ones(3))
print("ok", out.tolist())
