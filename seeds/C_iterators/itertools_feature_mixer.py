"""C: itertools chain/islice/accumulate/product/pairwise/starmap/count used to build features inside a Module."""
import itertools
import operator
import torch


class FeatureMixer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(3, 3)
        self.b = torch.nn.Linear(3, 3)

    def forward(self, x):
        layers = [self.a, self.b]
        outs = [layer(x) for layer in layers]
        chained = list(itertools.chain(outs, [x], (o * 2 for o in outs)))
        head = list(itertools.islice(chained, 1, None, 2))
        cums = list(itertools.accumulate(chained[:3]))
        cums_mul = list(itertools.accumulate([1, 2, 3, 4], operator.mul, initial=1))
        total = sum(head) + cums[-1]
        for (i, p), q in itertools.product(enumerate(outs), [0.5, -1.0]):
            total = total + p * q * (i + 1)
        for u, v in itertools.pairwise(chained[:4]):
            total = total + (u - v) * 0.1
        scaled = list(itertools.starmap(torch.add, zip(outs, itertools.repeat(x))))
        counter = itertools.count(start=3, step=2)
        bias = next(counter) + next(counter)
        return total + scaled[0] + bias, cums_mul, len(head)


fn = FeatureMixer()


def inputs():
    return (torch.randn(2, 3),)
