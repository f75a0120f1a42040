# expect: PASS
# why: the compiled function adds the result of a helper that bumps a counter hidden in its closure and prints (a graph break inside the call); the resume function Dynamo makes after the break receives that result on its stack and recompiles when it changes, although the outer call's argument repeats: a value computed inside the call is no repeated state, and every result matches eager

import torch


def make_ticker():
    ticks = 0

    def tick():
        nonlocal ticks
        ticks += 1
        print("tick", ticks)
        return ticks

    return tick


tick = make_ticker()


def advance(x):
    return x + tick()


def main():
    opt = torch.compile(advance, backend="eager")
    x = torch.zeros(2)
    print([opt(x).tolist() for _ in range(3)])


main()
