"""A campaign's workers record Dynamo's own signals beside the arcs when its coverage sources
name them (`--coverage-include dynamo-signals`), and only then."""

from __future__ import annotations

import sys

import pytest

from mutator.core.features import DYNAMO_SIGNALS, dynamo_signal, is_arc
from mutator.core.observation import RunConfig
from mutator.core.verdict import Verdict
from mutator.exec.pool import WorkerPool
from mutator.judge.check import Checker, CheckTask

from tests.conftest import program

pytestmark = pytest.mark.integration

SET_SUBCLASS = """
import torch

class Tags(set):
    pass

def fn(x, tags):
    for tag in tags:  # a sum: the same in any order
        x = x + len(tag)
    return x

def inputs():
    return (torch.ones(2), Tags({"ab", "c"}))
"""


def _features(coverage: tuple[str, ...], *, arcs: bool = True) -> tuple[frozenset[int], str]:
    """The features of a check (with or without arcs), and what the workers said records their arcs."""
    with WorkerPool(workers=1, config=RunConfig(timeout=60), coverage=coverage) as pool:
        result = Checker(pool).submit(CheckTask(program(SET_SUBCLASS), arcs=arcs)).result().result
        tracer = pool.tracer
    assert result is not None and result.verdict is Verdict.PASS, result and result.reason
    return result.features, tracer


def test_a_check_without_arcs_records_the_signals_alone():
    signals_only, _ = _features(("torch/_dynamo", DYNAMO_SIGNALS), arcs=False)
    assert dynamo_signal("vt", "UserDefinedSetVariable") in signals_only
    assert not any(map(is_arc, signals_only))


def test_signals_are_features_where_asked_for():
    with_signals, _ = _features(("torch/_dynamo", DYNAMO_SIGNALS))
    arcs_only, tracer = _features(("torch/_dynamo",))
    # the cheapest tracer this interpreter has (runtime.tracing.arc_tracer), said by the workers
    assert tracer == ("sys.monitoring" if sys.version_info >= (3, 12) else "coverage.py C tracer")
    wanted = {dynamo_signal("vt", "UserDefinedSetVariable"), dynamo_signal("op", "GET_ITER:UserDefinedSetVariable")}
    assert wanted <= with_signals
    assert not wanted & arcs_only
    # the arcs are the same kind of thing either way: the signals come beside them, not instead
    assert sum(map(is_arc, with_signals)) > 100 and sum(map(is_arc, arcs_only)) > 100
