"""B2: dict.pop with defaults, list.remove that raises ValueError and is caught, set.discard/remove, del on a copy's keys."""
import torch


def prune(params, banned):
    removed = []
    for name in list(params):
        if name in banned:
            removed.append(name)
            del params[name]
    return removed


def fn(x, names):
    params = {n: x * (i + 1) for i, n in enumerate(names)}
    removed = prune(params, {"b", "zz"})
    w = params.pop("a", torch.ones_like(x))
    v = params.pop("missing", None)
    order = list(names)
    misses = 0
    for n in ["c", "q", "a"]:
        try:
            order.remove(n)
        except ValueError:
            misses += 1
    live = set(order)
    live.discard("nope")
    try:
        live.remove("nope")
    except KeyError:
        misses += 10
    rest = sum(params.values()) if params else torch.zeros_like(x)
    out = w + rest
    if v is None:
        out = out - 1
    return out, removed, order, sorted(live), misses, sorted(params)


def inputs():
    return (torch.randn(2, 3), ["a", "b", "c", "d"])
