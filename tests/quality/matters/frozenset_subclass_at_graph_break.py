"""A `frozenset` subclass filled from a filtered generator in the compiled region, alive at a
graph break: the filter is padding (on torch 2.15 the bug needs the subclass, the generator
and the break). Torch 2.13 and 2.14 had a bug of this shape with a `set` subclass, where the
generator was padding too; 2.15 fixed that one, not this."""
import torch


class Tags(frozenset):
    pass


def fn(x):
    evens = Tags(i for i in range(6) if i % 2 == 0)
    y = x * 2
    torch._dynamo.graph_break()
    return y + len(evens)


def inputs():
    return torch.ones(3)
