# expect: FULLGRAPH_BREAK
# why: under fullgraph=True Dynamo refuses the data-dependent branch (Unsupported, a RuntimeError) before the traced append ever runs; the program's own `except RuntimeError` meant for its own error takes the refusal, so `seen` stays empty compiled: the break changed the program's course, documented, not a silent bug

import torch

seen = []


def check_positive(x):
    seen.append(x.shape[0])
    if x.sum() > 0:
        raise RuntimeError("positive input")
    return x * 2


strict = torch.compile(check_positive, backend="eager", fullgraph=True)
try:
    strict(torch.ones(3))
except RuntimeError:
    print("rejected")
print("seen", seen)
