"""runtime.tracing: the tracer an interpreter gets, and coverage.py's arcs read without its database."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from mutator.core.features import encode_arc, encode_arcs
from mutator.runtime import tracing
from mutator.runtime.errors import short_path

TARGET = '''
def walk(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            total += i
        elif i % 3 == 1:
            total -= 1
    try:
        raise KeyError(n)
    except KeyError:
        total += 1
    return total
'''


@pytest.fixture
def target(tmp_path: Path):
    path = tmp_path / "target.py"
    path.write_text(TARGET)
    spec = importlib.util.spec_from_file_location("tracing_target", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path, module


def test_encode_arcs_is_encode_arc_file_by_file():
    pairs = [(-1, 2), (2, 3), (3, -1), (40000, 70000)]
    assert list(encode_arcs("torch/_dynamo/x.py", pairs)) == [encode_arc("torch/_dynamo/x.py", a, b) for a, b in pairs]


def test_the_c_tracer_s_arcs_read_directly_are_those_of_its_database(target):
    path, module = target
    tracer = tracing.ArcTracer((str(path),))  # an absolute path is taken as it is
    for n in (2, 7):
        tracer.start()
        module.walk(n)
        direct = tracer.stop()
        data = tracer._coverage.get_data()
        through_database = frozenset(encode_arc(short_path(name), a, b)
                                     for name in data.measured_files() for a, b in data.arcs(name) or ())
        assert direct == through_database
        assert len(direct) > 8 + n // 3  # the loop's arcs, both branches, the handler
    # the baseline is subtracted: a run that covers nothing more says nothing
    tracer.set_baseline(direct)
    tracer.start()
    module.walk(7)
    assert tracer.stop() == frozenset()


def test_arc_tracer_takes_sys_monitoring_where_the_interpreter_has_it(target):
    path, module = target
    tracer = tracing.arc_tracer((str(path),))
    assert tracer.core == ("sys.monitoring" if sys.version_info >= (3, 12) else "coverage.py C tracer")
    tracer.start()
    module.walk(4)
    assert tracer.stop()


def test_a_run_s_arcs_are_its_own_and_the_files_decided_on_stay_decided(target):
    path, module = target
    tracer = tracing.ArcTracer((str(path),))
    tracer.start()
    module.walk(2)
    alone = tracer.stop()
    tracer.start()
    module.walk(7)
    more = tracer.stop()
    decided = tracer._coverage._collector.should_trace_cache
    tracer.start()
    module.walk(2)
    again = tracer.stop()
    assert again == alone and more > alone  # nothing of the walk(7) run is left in the next
    # what coverage.py decided about tracing each file it met is kept (erase() makes it anew)
    assert str(path) in decided and tracer._coverage._collector.should_trace_cache is decided
