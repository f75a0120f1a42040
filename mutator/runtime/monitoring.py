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
        self._traced: set[CodeType] = set()
        self._lines: list[tuple[CodeType, int]] = []
        self._branches: set[tuple[CodeType, int, int]] = set()
        self._running = False

    @staticmethod
    def _free_tool(monitoring: Any) -> int:
        if monitoring.get_tool(monitoring.COVERAGE_ID) is None:
            return int(monitoring.COVERAGE_ID)
        for tool in range(6):  # ids 0-5 are the tools'; 6 and 7 are the interpreter's own
            if monitoring.get_tool(tool) is None:
                return tool
        raise RuntimeError("sys.monitoring: every tool id is taken")

    # callbacks: as little as possible, each returns DISABLE where it can
    def _started(self, code: CodeType, offset: int) -> Any:
        if code.co_filename.startswith(self.roots) and code not in self._traced:
            self._traced.add(code)
            self._monitoring.set_local_events(self.tool, code, self._local)
        return self._disable

    def _line(self, code: CodeType, line: int) -> Any:
        self._lines.append((code, line))
        return self._disable

    def _branch(self, code: CodeType, offset: int, destination: int) -> Any:
        self._branches.add((code, offset, destination))
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
        for code in self._traced:
            monitoring.set_local_events(self.tool, code, 0)
        self._traced.clear()
        monitoring.restart_events()  # what was disabled fires again in the next run
        self._running = False
        arcs: Arcs = {}
        for code, line in self._lines:
            arcs.setdefault(code.co_filename, set()).add((line, line))
        lines_of: dict[CodeType, dict[int, int]] = {}
        for code, offset, destination in self._branches:
            table = lines_of.get(code)
            if table is None:
                table = lines_of[code] = _offset_lines(code)
            arcs.setdefault(code.co_filename, set()).add((table.get(offset, 0), table.get(destination, 0)))
        return arcs

    def close(self) -> None:
        if self._running:
            self.stop()
        self._monitoring.free_tool_id(self.tool)


def _offset_lines(code: CodeType) -> dict[int, int]:
    """Instruction offset -> line number of `code` (0 where an instruction has none)."""
    table: dict[int, int] = {}
    for start, end, line in code.co_lines():
        for offset in range(start, end, 2):
            table[offset] = line or 0
    return table
