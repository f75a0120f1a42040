"""runtime.monitoring: lines and branches by sys.monitoring, on a 3.12+ interpreter.

The suite's own interpreter may be 3.10 or 3.11; the monitor is standard library only, so its
checks run in a child process of the newest Python 3.12+ found here (this one, pyenv's, or
python3.1x on PATH).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mutator.runtime import monitoring

MODULE = Path(monitoring.__file__)


def newer_python() -> str:
    if sys.version_info >= (3, 12):
        return sys.executable
    pyenv = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[2-9]*/bin/python3.1[2-9]")))
    on_path = [path for name in ("python3.14", "python3.13", "python3.12") if (path := shutil.which(name))]
    for python in [*reversed(pyenv), *on_path]:  # the newest first; a pyenv shim may not run
        if subprocess.run([python, "-c", "import sys; sys.monitoring"], capture_output=True).returncode == 0:
            return python
    pytest.fail("no Python 3.12 or newer here (pyenv's ~/.pyenv/versions/3.12+ or python3.12+ on PATH): "
                "runtime.monitoring cannot be checked; install one")


TARGET = '''
def pick(x):
    if x > 0:
        y = 1
    else:
        y = 2
    return y
'''

OTHER = '''
def other(x):
    return x + 1
'''

DRIVER = '''
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("monitoring", sys.argv[1])
monitoring = importlib.util.module_from_spec(spec)
spec.loader.exec_module(monitoring)
here = sys.argv[2]
sys.path.insert(0, os.path.join(here, "traced"))
sys.path.insert(0, os.path.join(here, "untraced"))
import target, other
monitor = monitoring.LineBranchMonitor([os.path.join(here, "traced") + os.sep])
runs = {}
for name, calls in (("positive", [1]), ("negative", [-1]), ("both", [1, -1]), ("outside", [])):
    monitor.start()
    for x in calls:
        target.pick(x)
    other.other(1)
    runs[name] = sorted([os.path.basename(f), a, b] for f, pairs in monitor.stop().items() for a, b in pairs)
runs["split"] = monitor._split_branches
monitor.close()
print(json.dumps(runs))
'''


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    here = tmp_path_factory.mktemp("monitoring")
    (here / "traced").mkdir()
    (here / "untraced").mkdir()
    (here / "traced" / "target.py").write_text(TARGET)
    (here / "untraced" / "other.py").write_text(OTHER)
    proc = subprocess.run([newer_python(), "-c", DRIVER, str(MODULE), str(here)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def lines(arcs: list) -> set[int]:
    return {a for _, a, b in arcs if a == b}


def branches(arcs: list) -> set[tuple[int, int]]:
    return {(a, b) for _, a, b in arcs if a != b}


def test_a_run_reports_the_lines_it_executed_in_the_roots_only(runs: dict) -> None:
    assert lines(runs["positive"]) == {3, 4, 7}
    assert {name for name, _, _ in runs["positive"]} == {"target.py"}  # other.py is outside the roots
    assert runs["outside"] == []


def test_a_branch_is_the_arc_between_the_lines_it_joins(runs: dict) -> None:
    assert branches(runs["positive"]) == {(3, 4)}
    assert branches(runs["negative"]) == {(3, 6)}


def test_what_one_run_disabled_fires_again_in_the_next(runs: dict) -> None:
    assert lines(runs["negative"]) == {3, 6, 7}
    assert lines(runs["both"]) == {3, 4, 6, 7}


def test_both_directions_in_one_run_show_as_their_lines_or_branches(runs: dict) -> None:
    # 3.14 disables each direction on its own; 3.12 and 3.13 the branch whole, after its first direction
    assert branches(runs["both"]) == ({(3, 4), (3, 6)} if runs["split"] else {(3, 4)})


def test_the_monitor_needs_sys_monitoring() -> None:
    if monitoring.AVAILABLE:  # this interpreter has it: a monitor takes a tool id and gives it back
        monitor = monitoring.LineBranchMonitor(["/nowhere/"])
        tool = monitor.tool
        monitor.close()
        assert getattr(sys, "monitoring").get_tool(tool) is None
    else:
        with pytest.raises(RuntimeError, match="3.12"):
            monitoring.LineBranchMonitor(["/nowhere/"])


def _every_offset(code) -> dict[int, int]:
    """The line of each instruction offset of `code`, the long way (what LineTable bisects)."""
    table = {}
    for start, end, line in code.co_lines():
        for offset in range(start, end, 2):
            table[offset] = line or 0
    return table


def _codes(code):
    yield code
    for const in code.co_consts:
        if hasattr(const, "co_lines"):
            yield from _codes(const)


def test_a_line_table_gives_each_offset_the_line_co_lines_gives_it() -> None:
    # code of every shape the monitor meets: this module's, the monitor's own and a large module's
    import argparse
    codes = [code for module in (argparse, monitoring, sys.modules[__name__])
             for code in _codes(compile(Path(module.__file__).read_text(), module.__file__, "exec"))]
    assert len(codes) > 100
    for code in codes:
        table, lines = _every_offset(code), monitoring.LineTable(code)
        assert all(lines.at(offset) == line for offset, line in table.items()), code
        assert lines.at(max(table, default=0) + 2) == 0 and lines.at(-2) == 0  # past either end
