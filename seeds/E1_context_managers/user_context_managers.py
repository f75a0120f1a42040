"""E1: contextlib.contextmanager and a user __enter__/__exit__ class, with a graph break inside the with block."""
import contextlib

import torch

EVENTS = []


class Tracker:
    def __init__(self, name, scale):
        self.name = name
        self.scale = scale
        self.depth = 0

    def __enter__(self):
        self.depth += 1
        EVENTS.append("enter:" + self.name)
        return self.scale

    def __exit__(self, exc_type, exc, tb):
        self.depth -= 1
        EVENTS.append("exit:" + self.name)
        return False


@contextlib.contextmanager
def scoped(tag, bias):
    EVENTS.append("open:" + tag)
    try:
        yield bias * 2
    finally:
        EVENTS.append("close:" + tag)


OUTER = Tracker("outer", 3.0)


def helper(x, k):
    with scoped("helper", k) as b:
        y = x.sin() + b
    return y


def fn(x):
    with OUTER as s:
        y = x * s
        with scoped("mid", 0.5) as b:
            y = y + b
            torch._dynamo.graph_break()
            y = y.relu() - 1
        y = helper(y, 0.25)
    z = y.sum(dim=-1, keepdim=True) + OUTER.depth
    return y * z


def inputs():
    return (torch.randn(2, 5),)


def drive(f):
    a = f(torch.randn(2, 5))
    b = f(torch.randn(2, 5))
    return a, b


def state():
    return list(EVENTS), OUTER.depth
