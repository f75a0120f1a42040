# expect: INVALID
# why: the script's bytecode hook asserts on the bytecode Dynamo generates (a wrong expectation of it); that check of compiler output fails only while Dynamo compiles, so it is the program's check of compiler behaviour failing under compilation, not a wrong value

import dis

import torch
import torch._dynamo

SEEN = []


def hook(code, out_code):
    ops = [ins.opname for ins in dis.get_instructions(out_code)]
    SEEN.append(len(ops))
    assert "BUILD_SET" in ops, "expected Dynamo to rebuild a set"


handle = torch._dynamo.convert_frame.register_bytecode_hook(hook)


def store(d, t):
    d["three"] = t + 3
    return d


opt = torch.compile(store, backend="eager")
print(sorted(opt({}, torch.ones(2))))
handle.remove()
