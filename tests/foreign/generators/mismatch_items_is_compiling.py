# expect: MISMATCH
# why: the returned generator yields x + 1 under torch.compiler.is_compiling() and x otherwise; Dynamo materialises it while compiling, so the compiled run's items differ from eager's although both are iterators over three tensors

import torch


def shifted(x):
    for _ in range(3):
        yield x + 1 if torch.compiler.is_compiling() else x


def fn(x):
    return shifted(x * 3)


items = torch.compile(fn, backend="eager")(torch.ones(2))
