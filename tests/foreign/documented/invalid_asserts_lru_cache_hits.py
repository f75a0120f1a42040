# expect: INVALID
# why: the program asserts that its functools.lru_cache'd helper ran once; Dynamo documents that it traces through the cache, so compiled the helper runs on every call and the assert fails: the program's expectation contradicts documented behaviour, not a bug (and eager, calling through the cache inside compiled calls as Dynamo does, fails the same assert)

import functools

import torch

runs = 0


@functools.lru_cache(maxsize=None)
def table(size):
    global runs
    runs += 1
    return torch.arange(size, dtype=torch.float32)


def lookup(x):
    return x + table(4)


fast = torch.compile(lookup, backend="eager")
for _ in range(3):
    fast(torch.ones(4))
assert runs == 1, f"table built {runs} times"
print("built once")
