# expect: PASS
# why: a functools.cache'd method counts its calls on the object; inside the compiled forward Dynamo traces through the cache (documented, with its warning), so the count and cache_info() differ from eager's where the cache answered; the outputs agree

import functools

import torch


class Scaler(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lookups = 0

    @functools.cache
    def factor(self, width):
        self.lookups += 1
        return 1.0 / width

    def forward(self, x):
        return x * self.factor(x.shape[-1])


model = Scaler()
fast = torch.compile(model, backend="eager")
results = [fast(torch.ones(3, 4)) for _ in range(4)]
print("lookups", model.lookups, "hits", Scaler.factor.cache_info().hits)
print([r.sum().item() for r in results])
