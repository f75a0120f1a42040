# expect: MISMATCH check
# why: a Tensor subclass whose __torch_function__ calls super() and then applies one more op stays the subclass eagerly but comes back a plain Tensor compiled, failing the type assert

import torch


class Tracked(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs or {})
        if func is torch.Tensor.add:
            out = out.mul(1)
        return out


def bump(t):
    return t.add(1)


base = torch.zeros(3).as_subclass(Tracked)
eager_out = bump(base)
compiled_out = torch.compile(bump, backend="eager")(base)
print("eager type:", type(eager_out).__name__)
assert torch.equal(compiled_out.as_subclass(torch.Tensor), eager_out.as_subclass(torch.Tensor))
assert type(compiled_out).__name__ == type(eager_out).__name__, type(compiled_out).__name__
print("types agree")
