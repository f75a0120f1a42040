# expect: FULLGRAPH_BREAK Unsupported
# why: torch itself refuses this one: inside a fullgraph=True function a helper is decorated with @torch.compile(backend=...), a torch.compile call with no positional argument, which Dynamo does not trace ("torch.compile call with > 1 args"), so Unsupported escapes the call as it does without the fuzzer

import torch


@torch.compile(backend="eager", fullgraph=True)
def outer(x):
    @torch.compile(backend="eager")
    def inner(y):
        return y.cos() - 1

    return inner(x) * 3


print(outer(torch.ones(2, 2)))
