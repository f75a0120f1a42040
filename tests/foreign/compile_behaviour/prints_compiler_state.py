# expect: PASS
# why: the script prints Dynamo's frame counters and a CompileCounter's counts: compiler state, which differs between an eager and a compiled run by design and is not compared

import torch
from torch._dynamo.testing import CompileCounter
from torch._dynamo.utils import counters

frames = counters["frames"]
cnt = CompileCounter()


def blend(a, b):
    mixed = 0.25 * a + 0.75 * b
    print("blending")  # a graph break
    return mixed.clamp(0.0, 1.0)


fast = torch.compile(blend, backend=cnt)
out = fast(torch.rand(4), torch.rand(4))
print("frames ok:", frames["ok"], "of", frames["total"])
print(f"graphs compiled: {cnt.frame_count}, ops: {cnt.op_count}")
print("result", [round(v, 4) for v in out.tolist()])
