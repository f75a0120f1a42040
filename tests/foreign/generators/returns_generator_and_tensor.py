# expect: PASS
# why: a tuple (generator, tensor) comes back from the compiled call; the generator is materialised by Dynamo and yields the same items, the tensor is equal

import torch


def chunks(x, size):
    for start in range(0, x.shape[0], size):
        yield x[start:start + size].sum(0)


def split_and_total(x):
    y = x * 2 - 1
    return chunks(y, 2), y.sum()


torch.manual_seed(1)
parts, total = torch.compile(split_and_total, backend="eager")(torch.randn(5, 2))
print("total", round(float(total), 4))
