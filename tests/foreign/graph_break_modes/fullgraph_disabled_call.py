# expect: FULLGRAPH_BREAK Unsupported
# why: calling a torch._dynamo.disable'd helper forces a graph break, which fullgraph=True turns into an uncaught Unsupported

import torch
import torch._dynamo


@torch._dynamo.disable
def clip_on_host(t):
    return t.clamp(0, 1)


@torch.compile(backend="eager", fullgraph=True)
def squash(x):
    return clip_on_host(x.sigmoid() * 2 - 0.5)


x = torch.linspace(-2, 2, 5)
print(squash(x))
