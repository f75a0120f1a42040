# expect: PASS
# why: both compiled calls return a generator whose return value the script checks after draining it: one breaks the graph inside, so Dynamo hands back the real generator ("finished" comes back), the other ends with a plain return, which Dynamo's tuple_iterator also ends with (None); the oracle consumes each right after its call and hands back a generator that returns what the original returned

import torch


def stages(x):
    yield x + 1
    torch._dynamo.graph_break()
    yield x * 2
    return "finished"


def halves(x):
    yield x - 1
    yield x / 2
    return


def staged(x):
    return stages(x.relu())


def halved(x):
    return halves(x.abs())


def drain(gen):
    items = []
    while True:
        try:
            items.append(next(gen))
        except StopIteration as stop:
            return items, stop.value


x = torch.tensor([-1.0, 0.5, 2.0])
items, value = drain(torch.compile(staged, backend="eager")(x))
assert value == "finished", value
torch.testing.assert_close(torch.stack(items), torch.stack([x.relu() + 1, x.relu() * 2]))
more, nothing = drain(torch.compile(halved, backend="eager")(x))
assert nothing is None and len(more) == 2, (nothing, more)
print("returned:", value, nothing, "items:", len(items) + len(more))
