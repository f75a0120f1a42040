"""C: map/filter/zip/enumerate chained over several iterables (lists of tensors, ranges, strings) in a compiled function."""
import torch


def norm_pair(a, b):
    return (a - b).abs().mean()


def fn(xs, ys, weights):
    names = "abcde"
    pairs = zip(xs, ys, weights)
    scored = map(lambda t: (norm_pair(t[0], t[1]) * t[2], t[2]), pairs)
    kept = filter(lambda s: s[1] > 0.2, scored)
    total = torch.zeros(())
    labels = []
    for i, (score, w) in enumerate(kept, start=1):
        total = total + score * i
        labels.append(i)
    diffs = list(map(torch.sub, xs, ys))
    for name, d, k in zip(names, diffs, range(10, 0, -3)):
        if name in "ace":
            total = total + d.sum() / k
    stacked = torch.stack(list(map(torch.mul, xs, reversed(ys))))
    z = list(zip(*[(1, 2), (3, 4), (5, 6)]))
    return total, stacked.sum(0), labels, z


def inputs():
    xs = [torch.randn(3) for _ in range(4)]
    ys = [torch.randn(3) for _ in range(4)]
    return (xs, ys, [0.1, 0.5, 0.3, 0.9])
