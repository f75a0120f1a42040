"""A3: a user value class overriding __add__/__radd__/__sub__/__mul__/__rmul__/__neg__/__truediv__/__matmul__/__eq__/__ne__."""
import torch


class Vec:
    def __init__(self, data):
        self.data = data

    def __add__(self, other):
        if isinstance(other, Vec):
            return Vec(self.data + other.data)
        return Vec(self.data + other)

    def __radd__(self, other):
        return Vec(other + self.data)

    def __sub__(self, other):
        return self + (-other)

    def __neg__(self):
        return Vec(-self.data)

    def __mul__(self, other):
        o = other.data if isinstance(other, Vec) else other
        return Vec(self.data * o)

    __rmul__ = __mul__

    def __truediv__(self, k):
        return Vec(self.data / k)

    def __matmul__(self, other):
        return (self.data * other.data).sum()

    def __eq__(self, other):
        return isinstance(other, Vec) and bool(torch.allclose(self.data, other.data))

    def __ne__(self, other):
        return not self == other

    __hash__ = None


def normalize(v):
    return v / (v @ v).sqrt()


def fn(x, y):
    a, b = Vec(x), Vec(y)
    c = 2 * a + b - 0.5
    d = sum([a, b, c])  # 0 + a goes through Vec.__radd__
    d = sum([d, c], Vec(torch.zeros_like(x)))  # explicit Vec start: Vec.__add__
    e = 1.0 + normalize(c) * a
    same = a == Vec(x.clone())
    diff = a != b
    return e.data, d.data, (a @ b), same, diff


def inputs():
    return (torch.randn(6), torch.randn(6))
