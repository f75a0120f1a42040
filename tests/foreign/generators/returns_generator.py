# expect: PASS
# why: the compiled function returns a generator; Dynamo materialises it (a tuple_iterator with the same items where eager has a generator), as documented and as PyTorch's own tests accept by comparing list(gen); the items agree

import torch


def running_means(x):
    total = torch.zeros_like(x[0])
    for i, row in enumerate(x):
        total = total + row
        yield total / (i + 1)


def fn(x):
    return running_means(x.relu())


torch.manual_seed(0)
steps = torch.compile(fn)(torch.randn(4, 3))
