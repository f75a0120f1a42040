# expect: CRASH TorchRuntimeError
# expect on 2.15: PASS
# expect on 2.14: PASS
# why: try/except RuntimeError around a shape-mismatched torch.cat works eagerly, but Dynamo fails the fake-tensor trace and raises TorchRuntimeError; thread ids and id()s kept in globals are incidental; torch 2.14 fixed it, and 2.15 keeps it fixed (the except catches the shape error)

import threading
import torch

owner_thread = threading.get_ident()
tensor_ids = {}


def safe_concat(a, b):
    try:
        return torch.cat([a, b], dim=0)
    except RuntimeError:
        return torch.cat([a.flatten(), b.flatten()])


opt = torch.compile(safe_concat, backend="eager")
a = torch.ones(2, 3)
b = torch.zeros(2, 4)
tensor_ids["a"], tensor_ids["b"] = id(a), id(b)
out = opt(a, b)
tensor_ids["out"] = id(out)
assert out.shape == (14,), out.shape
print("fallback concat length", out.numel())
