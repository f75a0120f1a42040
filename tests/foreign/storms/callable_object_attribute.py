# expect: PASS
# why: torch.compile of a callable object (and of functools.partial) goes through Dynamo's shared wrapper external_utils.inner, whose guards read the object's attributes and the partial's keywords; inside main() the object's attribute changes between calls and two partials differ in a keyword, so each recompile is on a new state, and every result matches eager

import functools

import torch


class Affine:
    def __init__(self, slope):
        self.slope = slope

    def __call__(self, x):
        return x * self.slope + 1


def shifted(x, by):
    return x - by


def main():
    line = Affine(2)
    opt = torch.compile(line, backend="eager")
    x = torch.arange(3.0)
    outs = [opt(x)]
    line.slope = 4
    outs.append(opt(x))
    down_one = torch.compile(functools.partial(shifted, by=1), backend="eager")
    down_two = torch.compile(functools.partial(shifted, by=2), backend="eager")
    outs += [down_one(x), down_two(x)]
    print([o.tolist() for o in outs])


main()
