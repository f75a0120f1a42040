"""Line and branch coverage by `sys.monitoring` (PEP 669, Python 3.12+), at nearly no cost.

coverage.py's C tracer (`runtime.tracing` on Python 3.10 and 3.11) is called at every line of
every traced file, every time it runs, and at every call of every other file: on the
campaign's programs it made a compiled run 1.7 to 1.9 times as slow as an untraced one. Here
each line of a traced file calls back once per run and is then disabled
(`sys.monitoring.DISABLE`), and so is each branch once it has been seen taken: on 3.14 each
direction on its own (BRANCH_LEFT, BRANCH_RIGHT); on 3.12 and 3.13 a branch's BRANCH event can
only be disabled whole, so the direction taken first is recorded as a branch and the other
shows as the lines it reaches. Code outside the roots is disabled at its first call
(PY_START), so other libraries run untraced. A forked child inherits the tool untouched and
what it disables stays in the child.

Standard library only (its tests run it on a bare 3.12+ interpreter): the caller encodes what
`stop()` returns.
"""

from __future__ import annotations

import bisect
import sys
from collections.abc import Sequence
from types import CodeType
from typing import Any

AVAILABLE = sys.version_info >= (3, 12)

Arcs = dict[str, set[tuple[int, int]]]  # filename -> (from line, to line); a line alone is (line, line)


class LineBranchMonitor:
    """Lines and branches executed in files under `roots` (absolute paths, directories or files)."""

    def __init__(self, roots: Sequence[str], *, name: str = "mutator") -> None:
        if not AVAILABLE:
            raise RuntimeError(f"sys.monitoring needs Python 3.12 or newer, not {sys.version.split()[0]}")
        monitoring: Any = getattr(sys, "monitoring")
        self._monitoring = monitoring
        self.roots = tuple(roots)
        self.tool = self._free_tool(monitoring)
        monitoring.use_tool_id(self.tool, name)
        events = monitoring.events
        self._disable = monitoring.DISABLE
        # both directions of a branch as events of their own (3.14), else one event per branch
        self._split_branches = hasattr(events, "BRANCH_LEFT")
        branch_events = events.BRANCH_LEFT | events.BRANCH_RIGHT if self._split_branches else events.BRANCH
        self._local = events.LINE | branch_events
        self._start_event = events.PY_START
        monitoring.register_callback(self.tool, events.PY_START, self._started)
        monitoring.register_callback(self.tool, events.LINE, self._line)
        if self._split_branches:
            monitoring.register_callback(self.tool, events.BRANCH_LEFT, self._branch)
            monitoring.register_callback(self.tool, events.BRANCH_RIGHT, self._branch)
        else:
            monitoring.register_callback(self.tool, events.BRANCH, self._branch)
        self._traced: dict[int, CodeType] = {}  # id -> code with local events on, this run
        self._lines: list[tuple[CodeType, int]] = []
        self._branches: set[tuple[int, int, int]] = set()  # (id of the code, offset, destination)
        # the line tables of the code whose branches were reported, kept from run to run (a
        # worker's warm-up fills them for what every run meets; its forked children inherit them)
        self._lines_of: dict[int, tuple[CodeType, LineTable]] = {}
        self._running = False

    @staticmethod
    def _free_tool(monitoring: Any) -> int:
        if monitoring.get_tool(monitoring.COVERAGE_ID) is None:
            return int(monitoring.COVERAGE_ID)
        for tool in range(6):  # ids 0-5 are the tools'; 6 and 7 are the interpreter's own
            if monitoring.get_tool(tool) is None:
                return tool
        raise RuntimeError("sys.monitoring: every tool id is taken")

    # callbacks: as little as possible, each returns DISABLE where it can. Code objects are known
    # by id (hashing one hashes its bytecode and constants, nested code included: 6 us apiece),
    # and held in `_traced` while the run lasts, so that no id is reused meanwhile.
    def _started(self, code: CodeType, offset: int) -> Any:
        if code.co_filename.startswith(self.roots) and id(code) not in self._traced:
            self._traced[id(code)] = code
            self._monitoring.set_local_events(self.tool, code, self._local)
        return self._disable

    def _line(self, code: CodeType, line: int) -> Any:
        self._lines.append((code, line))
        return self._disable

    def _branch(self, code: CodeType, offset: int, destination: int) -> Any:
        self._branches.add((id(code), offset, destination))
        return self._disable

    def start(self) -> None:
        self._lines.clear()
        self._branches.clear()
        self._running = True
        self._monitoring.set_events(self.tool, self._start_event)

    def stop(self) -> Arcs:
        """Stop; what ran since start(), by file, every event enabled again for the next start()."""
        monitoring = self._monitoring
        monitoring.set_events(self.tool, 0)
        traced, self._traced = self._traced, {}
        for code in traced.values():
            monitoring.set_local_events(self.tool, code, 0)
        monitoring.restart_events()  # what was disabled fires again in the next run
        self._running = False
        arcs: Arcs = {}
        for code, line in self._lines:
            arcs.setdefault(code.co_filename, set()).add((line, line))
        for code_id, offset, destination in self._branches:
            known = self._lines_of.get(code_id)
            if known is None:  # held with its code: an id in this cache is never another code's
                if (code := traced.get(code_id)) is None:
                    continue  # only code started in this run has branch events on
                known = self._lines_of[code_id] = (code, LineTable(code))
            code, lines = known
            arcs.setdefault(code.co_filename, set()).add((lines.at(offset), lines.at(destination)))
        return arcs

    def close(self) -> None:
        if self._running:
            self.stop()
        self._monitoring.free_tool_id(self.tool)


class LineTable:
    """The line of an instruction offset of `code` (0 where it has none), by bisection over the
    ranges `co_lines()` gives: building it costs one step per range, not one per instruction
    (a table of every offset of Dynamo's larger functions made collecting a run's branches
    cost 26 ms of a 60 ms compile)."""

    __slots__ = ("_starts", "_ends", "_lines")

    def __init__(self, code: CodeType) -> None:
        ranges = [(start, end, line) for start, end, line in code.co_lines() if end > start]
        self._starts = [start for start, _, _ in ranges]
        self._ends = [end for _, end, _ in ranges]
        self._lines = [line or 0 for _, _, line in ranges]

    def at(self, offset: int) -> int:
        i = bisect.bisect_right(self._starts, offset) - 1
        return self._lines[i] if i >= 0 and offset < self._ends[i] else 0
