"""A harness program for the reproducer tests."""

from __future__ import annotations

from mutator.core.program import Program


HARNESS = '''\
import torch

SEEN = []


def fn(x):
    return x + 1


def inputs():
    return (torch.ones(2),)


def drive(f):
    return [f(torch.ones(2)) for _ in range(3)]
'''


def harness() -> Program:
    return Program.from_source(HARNESS, "h.py")
