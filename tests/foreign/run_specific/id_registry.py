# expect: PASS
# why: id() values of inputs are kept in a global list/dict as a cache key (run-specific, not compared); the compiled function's own outputs match eager

import torch

seen_ids = []
cache = {}


def featurize(x):
    return torch.cat([x.mean(0, keepdim=True), x.amax(0, keepdim=True)])


opt = torch.compile(featurize, backend="eager")


def cached_featurize(x):
    key = id(x)
    seen_ids.append(key)
    if key not in cache:
        cache[key] = opt(x)
    return cache[key]


torch.manual_seed(2)
a = torch.randn(4, 3)
first = cached_featurize(a)
again = cached_featurize(a)
assert first is again
torch.testing.assert_close(first, featurize(a))
print("cache entries:", len(cache), "lookups:", len(seen_ids))
