# expect: PASS
# why: the compiled function calls a functools.lru_cache'd helper that logs its own calls; Dynamo documents that it ignores the cache and traces the helper (it warns so), so compiled the helper's body runs on every call and cache_info() sees nothing, where eager hits the cache: the log and the printed statistics differ as documented, and the values agree

import functools

import torch

calls = []


@functools.lru_cache(maxsize=8)
def window(n):
    calls.append(n)
    return torch.hann_window(n)


def smooth(x):
    return x * window(x.shape[-1])


fast = torch.compile(smooth, backend="eager")
for step in range(3):
    out = fast(torch.full((2, 5), float(step)))
print("calls", len(calls), window.cache_info())
print("last", out.sum().item())
