# expect: CRASH AssertionError
# why: a global settings object whose __getattr__ bumps a counter in its own __dict__ is read with getattr(..., default) inside the compiled function; Dynamo's guard on that counter fails at build time ("Guard failed on the same frame it was created"), eager is fine

import torch


class LazySettings:
    def __init__(self):
        self.lookups = 0

    def __getattr__(self, name):
        self.lookups += 1
        return 0.5


settings = LazySettings()


def damp(x):
    return x * getattr(settings, "damping", 1.0)


opt = torch.compile(damp, backend="eager")
outs = []
for n in (2, 3, 4):
    outs.append(opt(torch.ones(n)))
assert [o.sum().item() for o in outs] == [1.0, 1.5, 2.0]
print("lookups:", settings.lookups)
