# expect: FULLGRAPH_BREAK
# why: the script checks its frame count at top level after two calls (its eager run stops there: nothing compiles eagerly); compiled, Dynamo refuses the first call under fullgraph=True (a call to a disabled function) and nothing catches it, so the run ends after one call: the refusal, not the calls missing after it

import torch
import torch._dynamo
import torch._dynamo.testing


@torch._dynamo.disable
def opaque(x):
    return x + 1


def shifted(x):
    return opaque(x * 2) - 1


counter = torch._dynamo.testing.CompileCounter()
strict = torch.compile(shifted, backend=counter, fullgraph=True)
first = strict(torch.ones(2))
second = strict(torch.zeros(2))
assert counter.frame_count == 1, counter.frame_count
