# expect: MISMATCH check
# why: the compiled call returns a generator that ends with return "finished"; Dynamo materialises it as a tuple_iterator over the same items, whose StopIteration carries nothing, so the script's comparison of the two return values (eager's generator, the compiled call's) fails only when compiled, after the call's result already differed in what it returned

import torch


def readings(x):
    for row in x:
        yield row.sum()
    return "finished"


def fn(x):
    return readings(x * 2)


def drain(gen):
    items = []
    while True:
        try:
            items.append(next(gen))
        except StopIteration as stop:
            return items, stop.value


x = torch.arange(6.0).reshape(3, 2)
eager_items, eager_value = drain(fn(x))
compiled_items, compiled_value = drain(torch.compile(fn, backend="eager")(x))
torch.testing.assert_close(torch.stack(compiled_items), torch.stack(eager_items))
assert compiled_value == eager_value, f"return value {compiled_value!r}, eagerly {eager_value!r}"
print("returned:", compiled_value)
