"""Judges other people's programs right: the foreign-style regression suite in tests/foreign.

Every program there is ours, written in the shapes people paste into PyTorch issues and
write as tests (scripts that compile and check themselves, unittest files, threads,
loggers, `id()`s, Dynamo counters, graph-break modes, recompile shapes), and starts with
its expected verdict:

    # expect: VERDICT [KIND]
    # expect on 2.14: VERDICT [KIND]      (optional: what a given torch release gives instead)

KIND, when given, is the short type of the exception behind a CRASH or FULLGRAPH_BREAK,
or `check` for a MISMATCH where the program's own check failed (alone, or after a
divergence in what the calls returned). All of them go through
`mutate run --json` in one invocation, as a user would run them; the test prints the
agreement table (expected x got) and fails on any disagreement.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

pytestmark = pytest.mark.quality

ROOT = Path(__file__).resolve().parents[2]
FOREIGN = ROOT / "tests" / "foreign"


def expectations(release: str) -> dict[str, tuple[str, str]]:
    """Each program's expected verdict and kind on torch `release` ("2.14"): its own line for
    that release where it has one (Dynamo fixes bugs between releases), else its first line."""
    found = {}
    for path in sorted(FOREIGN.rglob("*.py")):
        lines = path.read_text().splitlines()
        assert lines[0].startswith("# expect: "), f"{path}: the first line must be '# expect: VERDICT [KIND]'"
        line = next((line for line in lines[1:5] if line.startswith(f"# expect on {release}: ")), lines[0])
        verdict, _, kind = line.split(": ", 1)[1].partition(" ")
        found[str(path)] = (verdict, kind.strip())
    return found


def got_kind(entry: dict) -> str:
    exception = entry["exception"]
    if entry["verdict"] == "MISMATCH":
        own = (entry["divergence"] or {}).get("observation") == "check" or (exception or {}).get("check") == "check"
        return "check" if own else ""
    return exception["type"].rsplit(".", 1)[-1] if exception else ""


def test_every_foreign_program_gets_its_expected_verdict_and_kind():
    proc = subprocess.run([sys.executable, str(ROOT / "cli.py"), "run", "--json", "-j", "2", str(FOREIGN)],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          timeout=1800)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    results = {entry["path"]: entry for entry in json.loads(proc.stdout)}
    release = ".".join(next(iter(results.values()))["torch"]["torch"].split(".")[:2])
    expected = expectations(release)
    assert len(expected) >= 40
    table: Counter[tuple[str, str]] = Counter()
    wrong = []
    for path, (verdict, kind) in expected.items():
        entry = results[path]
        table[(verdict, entry["verdict"])] += 1
        if entry["verdict"] != verdict or kind and got_kind(entry) != kind:
            wrong.append(f"{Path(path).relative_to(FOREIGN)}: expected {verdict} {kind}, "
                         f"got {entry['verdict']} {got_kind(entry)}: {entry['reason'][:200]}")
    print("\nexpected x got")
    for (want, got), n in sorted(table.items()):
        print(f"  {want:16} {got:16} {n}")
    assert wrong == []
