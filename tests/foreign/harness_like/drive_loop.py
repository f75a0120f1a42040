# expect: PASS
# why: a drive()-style loop feeds fresh inputs() to the compiled fn several times and checks each step against eager; all equal

import torch


def fn(state, update):
    state = state * 0.9 + update * 0.1
    return state, state.norm()


def inputs(step):
    g = torch.Generator().manual_seed(step)
    return torch.zeros(4) + step, torch.rand(4, generator=g)


def drive(compiled, steps=4):
    norms = []
    for step in range(steps):
        args = inputs(step)
        got = compiled(*args)
        want = fn(*args)
        torch.testing.assert_close(got[0], want[0])
        torch.testing.assert_close(got[1], want[1])
        norms.append(round(got[1].item(), 4))
    return norms


compiled_fn = torch.compile(fn, backend="eager")
print("norms:", drive(compiled_fn))
