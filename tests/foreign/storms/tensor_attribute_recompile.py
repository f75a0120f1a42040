# expect: PASS
# why: one call's input tensor carries a Python attribute (t.tag = 1) the others do not, in a loop inside main() so that nothing else about the calls differs; Dynamo guards hasattr(x, 'tag') and recompiles once, legitimately, for a state no earlier call had, and every result matches eager

import torch


def weigh(x):
    if hasattr(x, "tag"):
        return x * (x.tag + 1)
    return x + 1


opt = torch.compile(weigh, backend="eager")


def main():
    outs = []
    for i in range(4):
        t = torch.ones(3)
        if i == 2:
            t.tag = 1
        outs.append(opt(t))
    print([round(float(o.sum()), 1) for o in outs])


main()
