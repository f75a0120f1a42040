# expect: MISMATCH
# why: format(3, "02d") inside the compiled function ignores the spec under Dynamo ('n=3', eagerly 'n=03'); the script's own check that no graph break was recorded holds eagerly and compiled, so the wrong label is the finding

import torch
from torch._dynamo.utils import counters

counters.clear()


def labelled(x):
    return x.sum(), "n=" + format(3, "02d")


opt = torch.compile(labelled, backend="eager")
total, text = opt(torch.ones(3))
assert not counters["graph_break"], dict(counters["graph_break"])
print(text, total.item())
