"""C: list iterators partially consumed before a graph break (print) and resumed after it, plus filtered genexps."""
import torch


class Stepper(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x, scales):
        it = iter(scales)
        rev = iter(scales[::-1])
        x = self.lin(x) * next(it)
        a0, b0 = next(rev), next(rev)
        i0 = sum(1 for i, (a, b) in enumerate(zip(scales, scales[1:])) if a > b)
        odd_sum = sum(s for s in scales if s % 2 == 1)
        x = x + odd_sum + a0 - b0
        print("mid", len(scales), i0)
        x = x * next(it)
        for s in it:
            x = x + s
        for i, b in enumerate(rev):
            if b > a0:
                x = x - i
        remaining = list(it)
        y = sum(v * x for v in range(4) if v != 2)
        return x + y, remaining


fn = Stepper()


def inputs():
    return (torch.randn(2, 3), [3, -1, 2, 5, 4])
