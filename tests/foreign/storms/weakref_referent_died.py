# expect: PASS
# why: the compiled function calls a weak reference and branches on None; between two calls inside main() the referent is deleted and collected, so ref() gives None: Dynamo guards the type of ref() and recompiles once, legitimately (a dead referent is another state), and both results match eager

import gc
import weakref

import torch


def offset_or_double(ref, z):
    held = ref()
    if held is None:
        return z * 2
    return z + held


def main():
    offset = torch.full((3,), 0.5)
    ref = weakref.ref(offset)
    z = torch.arange(3.0)
    opt = torch.compile(offset_or_double, backend="eager")
    alive = opt(ref, z)
    del offset
    gc.collect()
    dead = opt(ref, z)
    print(alive.tolist(), dead.tolist())


main()
