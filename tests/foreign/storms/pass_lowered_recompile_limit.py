# expect: PASS
# why: the program lowers the recompile limit to 2 itself and calls with 6 different ints, as tests of the limit do: reaching the limit is what it checks, not specialisation to report

import torch
import torch._dynamo.testing


@torch._dynamo.config.patch(recompile_limit=2)
def check_limit():
    frames = torch._dynamo.testing.CompileCounter()

    def scale(t, k):
        return t * k + k

    opt = torch.compile(scale, backend=frames, dynamic=False)
    outs = [opt(torch.ones(2), k).sum().item() for k in range(6)]
    assert outs == [4.0 * k for k in range(6)], outs
    return outs


print(check_limit())
