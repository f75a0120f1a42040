# expect: PASS
# why: a module-level helper made by a factory keeps a counter in its closure and bumps it; the compiled function inlines it before a graph break, and Dynamo guards G['next_id'].__closure__[0].cell_contents, so each call recompiles on a counter no earlier call had (a global function's closure is part of the state), and every result matches eager

import torch


def make_ids(start):
    last = start

    def next_id():
        nonlocal last
        last += 1
        return last

    return next_id


next_id = make_ids(10)


def label(x):
    ident = next_id()
    torch._dynamo.graph_break()
    return x + ident


def main():
    opt = torch.compile(label, backend="eager")
    x = torch.zeros(2)
    print([opt(x).tolist() for _ in range(3)])


main()
