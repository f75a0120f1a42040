# expect: PASS
# why: the script prints items of a set of plain objects, whose order follows their addresses and so differs between any two runs; that line is masked, the rest is compared

import torch


class Slot:
    def __init__(self, name):
        self.name = name


slots = {Slot("a"), Slot("b"), Slot("c"), Slot("d")}


def weigh(x):
    return (x * 3).sum()


opt = torch.compile(weigh, backend="eager")
print("order:", ",".join(s.name for s in slots))
print("weight", opt(torch.ones(5)).item())
