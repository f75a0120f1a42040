# expect: PASS
# why: as in a test method, the compiled function calls a local helper that bumps a nonlocal counter, then breaks the graph; Dynamo inlines the helper and guards what its closure cell holds, so each call recompiles on a counter no earlier call had (the helper's closure is part of the state), and every result matches eager

import torch


def test_steps():
    steps = 0

    def step():
        nonlocal steps
        steps += 1
        return steps

    def walk(x):
        k = step()
        torch._dynamo.graph_break()
        return x * k

    opt = torch.compile(walk, backend="eager")
    x = torch.ones(2)
    got = [opt(x).tolist() for _ in range(3)]
    assert got == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]], got
    print(got)


test_steps()
