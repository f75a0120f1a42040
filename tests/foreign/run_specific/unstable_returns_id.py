# expect: UNSTABLE
# why: the compiled function returns id() of a freshly created object alongside a tensor, so its return value differs between two eager runs by nature

import torch


def scale_with_token(x):
    token = object()
    return x * 2, id(token)


opt = torch.compile(scale_with_token, backend="eager")
out, token_id = opt(torch.ones(3))
assert torch.equal(out, torch.full((3,), 2.0))
assert isinstance(token_id, int)
print("token is an int:", isinstance(token_id, int))
