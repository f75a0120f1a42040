# expect: MISMATCH
# why: Dynamo traces through the functools.lru_cache'd helper (documented: its call log differs), but the function also computes another value when compiled (is_compiling() adds 1), which no uncached call explains: still a mismatch

import functools

import torch

seen = []


@functools.lru_cache
def offset(k):
    seen.append(k)
    return k / 10


def shift(x):
    y = x + offset(3)
    if torch.compiler.is_compiling():
        y = y + 1
    return y


fast = torch.compile(shift, backend="eager")
for _ in range(2):
    result = fast(torch.zeros(3))
print(result, len(seen))
