"""Arc coverage of chosen torch directories, in the compiled run only.

The `coverage.Coverage` object is built once in the warm worker (building it per run
costs tens of milliseconds); a forked child only starts and stops it. Arcs the worker's
own warm-up executes are subtracted: every run covers them, so they tell nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import coverage
import torch

from mutator.core.features import encode_arc
from mutator.runtime.errors import short_path


class ArcTracer:
    def __init__(self, includes: Sequence[str]) -> None:
        site = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))
        patterns = []
        for include in includes:
            path = os.path.join(site, include)
            patterns.append(os.path.join(path, "*") if os.path.isdir(path) else path)
        self.includes = tuple(includes)
        self._coverage = coverage.Coverage(branch=True, include=patterns, data_file=None, config_file=False)
        self._baseline: frozenset[int] = frozenset()

    def start(self) -> None:
        self._coverage.erase()
        self._coverage.start()

    def stop(self) -> frozenset[int]:
        """Stop tracing; the arcs since start() as features, minus the baseline."""
        self._coverage.stop()
        data = self._coverage.get_data()
        arcs = frozenset(
            encode_arc(short_path(filename), a, b)
            for filename in data.measured_files()
            for a, b in data.arcs(filename) or ()
        )
        return arcs - self._baseline

    def set_baseline(self, features: frozenset[int]) -> None:
        self._baseline = features
