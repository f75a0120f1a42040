"""B1: defaultdict(list) grouping, a list subclass with extra methods, and set algebra methods in a compiled loop."""
import collections
import torch


class TensorList(list):
    def stacked(self):
        return torch.stack(list(self))

    def add_all(self, other):
        return TensorList(a + b for a, b in zip(self, other))


class Grouper(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(3, 3)

    def forward(self, x, tags):
        groups = collections.defaultdict(list)
        for i, t in enumerate(tags):
            groups[t].append(self.proj(x[i]))
        seen = set(groups)
        wanted = {"even", "odd", "prime"}
        both = seen.intersection(wanted)
        only_seen = seen.difference(wanted)
        either = seen.union(wanted)
        sym = seen.symmetric_difference({"odd", "misc"})
        acc = TensorList()
        for key in sorted(both):
            acc.append(torch.stack(groups[key]).sum(0))
        acc = acc.add_all(TensorList([torch.ones(3)] * len(acc)))
        out = acc.stacked().sum(0)
        missing = len(groups["never"])
        return out, sorted(only_seen), len(either), sorted(sym), missing, sorted(groups), seen.issubset(either)


fn = Grouper()


def inputs():
    return (torch.randn(5, 3), ["even", "odd", "even", "misc", "odd"])
