# expect: PASS
# why: Dynamo rebuilds the in-place union of a set with a set held by an object in its own insertion order, so the printed sets list the same strings in another order (under the workers' PYTHONHASHSEED=0; MISMATCH when stdout was compared verbatim); Python promises no order for a set
import operator
import torch


class Palette:
    def __init__(self, colours):
        self.colours = colours


def mix_with(name):
    op = getattr(operator, name)

    def mix():
        chosen = {"three"}
        colours = {"one", "four"}
        extra = Palette(colours).colours
        return op(chosen, extra), op(extra, chosen)

    compiled = torch.compile(mix, fullgraph=True, backend="eager")
    print(compiled())


mix_with("ior")
