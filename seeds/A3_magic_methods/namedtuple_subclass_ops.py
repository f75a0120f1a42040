"""A3: namedtuple subclasses overriding __add__, __mul__, __eq__ and __len__ used for state in a module's forward."""
import collections

import torch

_Pair = collections.namedtuple("_Pair", ["h", "c"])


class State(_Pair):
    __slots__ = ()

    def __add__(self, other):
        return State(self.h + other.h, self.c + other.c)

    def __mul__(self, k):
        return State(self.h * k, self.c * k)

    def __eq__(self, other):
        return isinstance(other, State) and self.h.shape == other.h.shape

    __hash__ = _Pair.__hash__

    @property
    def norm(self):
        return self.h.norm() + self.c.norm()


class Point(collections.namedtuple("Point", "x y")):
    def __sub__(self, other):
        return Point(self.x - other.x, self.y - other.y)

    def __len__(self):
        return 1  # intentionally not the field count


class Cell(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ih = torch.nn.Linear(3, 3)
        self.hh = torch.nn.Linear(3, 3)

    def forward(self, x):
        st = State(torch.zeros(2, 3), torch.zeros(2, 3))
        for t in range(x.shape[0]):
            nxt = State(torch.tanh(self.ih(x[t]) + self.hh(st.h)), st.c)
            st = st * 0.5 + nxt
        p = Point(st.h, st.c) - Point(x[0], x[-1])
        h, c = st  # tuple unpacking still works
        return h + c, p.x, st.norm, st == State(h, c), len(p), len(st), tuple.__add__(st, (1,))[-1]


fn = Cell()


def inputs():
    return (torch.randn(4, 2, 3),)
