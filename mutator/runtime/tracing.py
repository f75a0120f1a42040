"""Arc coverage of chosen torch directories, in the compiled run only.

`arc_tracer` picks the cheapest tracer the interpreter has: on Python 3.12+ lines and
branches by `sys.monitoring` (`runtime.monitoring`: each reported once per run, then
disabled; a compiled run about 1.1 times as slow as untraced, against 1.7-1.9 with coverage.py
on the campaign's programs), before that coverage.py's C tracer with branch coverage (arcs
between lines). Either is built once in the warm worker (building coverage.py's per run costs
tens of milliseconds); a forked child only starts and stops it. What the worker's own warm-up
executes is subtracted: every run covers it, so it tells nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

import coverage
import torch

from mutator.core.features import COVERAGE_TRACER, MONITORING_TRACER, encode_arcs
from mutator.runtime.errors import short_path
from mutator.runtime.monitoring import AVAILABLE as MONITORING, LineBranchMonitor


class Tracer(Protocol):
    includes: tuple[str, ...]
    core: str  # what traces: MONITORING_TRACER or COVERAGE_TRACER

    def start(self) -> None: ...

    def stop(self) -> frozenset[int]: ...

    def set_baseline(self, features: frozenset[int]) -> None: ...


def arc_tracer(includes: Sequence[str]) -> Tracer:
    """The tracer for `includes` (paths under site-packages, like "torch/_dynamo")."""
    return MonitorTracer(includes) if MONITORING else ArcTracer(includes)


def _site_paths(includes: Sequence[str]) -> list[str]:
    site = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))
    return [os.path.join(site, include) for include in includes]


class _Features:
    """What both tracers share: a run's arcs, file by file, as features less the warm-up's."""

    _baseline: frozenset[int] = frozenset()

    def set_baseline(self, features: frozenset[int]) -> None:
        self._baseline = features

    def _features(self, arcs: Mapping[str, Iterable[tuple[int, int]]]) -> frozenset[int]:
        return frozenset(feature for filename, pairs in arcs.items()
                         for feature in encode_arcs(short_path(filename), pairs)) - self._baseline


class MonitorTracer(_Features):
    """Lines (as the arc from a line to itself) and taken branches (between their lines), Python 3.12+."""

    core = MONITORING_TRACER

    def __init__(self, includes: Sequence[str]) -> None:
        self.includes = tuple(includes)
        roots = [path + os.sep if os.path.isdir(path) else path for path in _site_paths(includes)]
        self._monitor = LineBranchMonitor(roots)

    def start(self) -> None:
        self._monitor.start()

    def stop(self) -> frozenset[int]:
        return self._features(self._monitor.stop())


class ArcTracer(_Features):
    """coverage.py's C tracer with branch coverage: every arc between lines (Python 3.10, 3.11)."""

    core = COVERAGE_TRACER

    def __init__(self, includes: Sequence[str]) -> None:
        patterns = [os.path.join(path, "*") if os.path.isdir(path) else path for path in _site_paths(includes)]
        self.includes = tuple(includes)
        self._coverage = coverage.Coverage(branch=True, include=patterns, data_file=None, config_file=False)

    def start(self) -> None:
        collector = self._direct()
        if collector is not None:
            # only the arcs go: erase() would drop also what coverage.py decided, file by file,
            # about tracing it, which the warm-up's runs filled for the files every run meets
            # (decided again in Python at each file's first frame: 16 ms of every traced run)
            collector.data.clear()
        else:
            self._coverage.erase()
        self._coverage.start()

    def stop(self) -> frozenset[int]:
        """Stop tracing; the arcs since start() as features, minus the baseline."""
        self._coverage.stop()
        raw = self._packed_arcs()
        if raw is None:  # not the C tracer's packed pairs: through coverage.py's data (an SQLite database)
            data = self._coverage.get_data()
            raw = {filename: data.arcs(filename) or () for filename in data.measured_files()}
        return self._features(raw)

    def _packed_arcs(self) -> dict[str, list[tuple[int, int]]] | None:
        """The C tracer's arcs as it holds them (a set of packed ints per file), read without the
        SQLite round trip of `Coverage.get_data()` (three times the rest of stopping); None where
        this coverage.py keeps them otherwise."""
        collector = self._direct()
        if collector is None:
            return None
        return {filename: [_unpack(packed) for packed in packeds] for filename, packeds in collector.data.items()}

    def _direct(self) -> Any:
        """coverage.py's collector where its C tracer's packed arcs are read (and cleared) in
        place, else None (after a first start(): before, there is none)."""
        collector = getattr(self._coverage, "_collector", None)
        if (isinstance(getattr(collector, "data", None), dict)
                and isinstance(getattr(collector, "should_trace_cache", None), dict)
                and getattr(getattr(collector, "core", None), "packed_arcs", False)):
            return collector
        return None


def _unpack(packed: int) -> tuple[int, int]:
    """One arc as coverage.py's C tracer packs it (tracer.c, CTracer_record_pair): two 28-bit
    line numbers, their signs in bits 56 and 57."""
    a, b = packed & 0xFFFFFFF, (packed >> 28) & 0xFFFFFFF
    return (-a if packed & (1 << 56) else a), (-b if packed & (1 << 57) else b)
