# expect: PASS
# why: the compiled function returns an endless sampler (its .item() keeps Dynamo from materialising it, so both runs get a real generator); it is consumed up to a bound, the program takes five draws from what it gets back, and nothing hangs

import itertools

import torch


def sampler(weights):
    g = torch.Generator().manual_seed(0)
    while True:
        yield int(torch.multinomial(weights, 1, generator=g).item())


def make_sampler(w):
    return sampler(w / w.sum())


draws = torch.compile(make_sampler, backend="eager")(torch.tensor([1.0, 2.0, 3.0]))
print("first draws", list(itertools.islice(draws, 5)))
