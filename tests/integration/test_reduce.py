"""Reduction with real workers and torch: `mutate reduce` on a finding, repro.py, the
background reduction of `mutate fuzz`, `mutate report` and `mutate plot`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mutator.findings.store import FindingStore
from mutator.core.program import Program, load_program
from mutator.reduce.repro import control_of, harness_repro, make_repros, verify
from mutator.core.values import TensorValue
from mutator.core.verdict import Verdict

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
BURIED = ROOT / "tests/fixtures/reduce/buried_is_compiling.py"
SMALL_BUG = '''\
"""A small finding: the compiled branch adds one."""
import torch

SCALE = 3  # not needed


def fn(x):
    y = x * 1
    if torch.compiler.is_compiling():
        y = y + 1
    return y


def inputs():
    return (torch.ones(2),)
'''


TENSOR = TensorValue("Tensor", "torch.float32", (2,), False, "cpu", None, "")


def cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


def plain_python(path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300,
                          cwd=path.parent, env=env)


@pytest.fixture()
def finding_dir(tmp_path: Path, checker) -> Path:
    """A campaign directory holding one finding: the buried is_compiling() divergence."""
    program = load_program(BURIED)
    result = checker.check(program)
    store = FindingStore(tmp_path / "campaign", torch_version="2.13.0")
    finding, _ = store.record(result, provenance="seed:buried_is_compiling.py", parent=None, elapsed=1.0)
    return tmp_path / "campaign" / finding.directory


@pytest.mark.soak  # a campaign, then its finding reduced: 95 s
def test_mutate_reduce_on_a_finding_keeps_its_signature_and_writes_a_failing_repro(finding_dir: Path):
    proc = cli("reduce", "--json", "--no-ablation", "-j", "2", str(finding_dir))
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert data["confirmed"] and data["lines_after"] <= 12, data
    reduced = (finding_dir / "reduced.py").read_text()
    assert "is_compiling" in reduced and "HISTORY" not in reduced and "Norm" not in reduced
    assert data["repro_reproduces"], data["repro"]
    repro = plain_python(finding_dir / "repro.py")
    assert repro.returncode == 1 and "AssertionError" in repro.stderr and "compiled:" in repro.stdout
    readme = (finding_dir / "README.md").read_text()
    assert "## Reduced" in readme and "repro.py" in readme
    record = json.loads((finding_dir / "finding.json").read_text())
    assert record["reduction"]["lines_after"] == data["lines_after"] and record["reduction"]["canonical"]
    again = cli("run", "--json", "-j", "2", str(finding_dir / "reduced.py"))  # fresh runs: still the finding
    assert json.loads(again.stdout)[0]["verdict"] == "MISMATCH"

    report = cli("report", "--json", "-j", "2", str(finding_dir.parent.parent))
    assert report.returncode == 0, report.stderr[-3000:]
    [row] = json.loads(report.stdout)
    assert row["reduced_lines"] == data["lines_after"] and row["repro"] and row["ablation"] == "frontend"
    text = (finding_dir / "report.md").read_text()
    import torch  # the workers run this interpreter's torch
    assert "### Versions" in text and f"torch: {torch.__version__}" in text and "| `backend=\"inductor\"` |" in text


def test_repro_exits_1_with_the_bug_and_0_without_it():
    buggy = Program.from_source(SMALL_BUG, "small.py")
    result = verify(harness_repro(buggy))
    assert result.reproduces and result.exit_code == 1 and result.control_exit_code == 0, result.output
    fixed = Program.from_source(SMALL_BUG.replace("y = y + 1", "y = y + 0"), "fixed.py")
    assert verify(harness_repro(fixed)).exit_code == 0
    assert "torch.compile = lambda" in control_of(harness_repro(buggy))


def test_the_short_repro_comes_first_and_the_long_one_stands_in_where_it_cannot_reproduce():
    buggy = Program.from_source(SMALL_BUG, "small.py")
    short, long, *_fresh = make_repros(buggy, Verdict.MISMATCH, result=TENSOR)
    assert "assert_close(actual, expected" in short and len(short) < len(long)
    result = verify(short)
    assert result.reproduces and "Tensor-likes are not close" in result.output, result.output
    fixed = Program.from_source(SMALL_BUG.replace("y = y + 1", "y = y + 0"), "fixed.py")
    assert verify(make_repros(fixed, Verdict.MISMATCH, result=TENSOR)[0]).exit_code == 0
    # eager raises where compiled returns: the six lines fail in the eager run, so does
    # their control, and they are not believed; the long form compares outcomes
    raising = Program.from_source(
        "import torch\n\ndef fn(x):\n    if not torch.compiler.is_compiling():\n"
        "        raise ValueError('eager only')\n    return x\n\ndef inputs():\n    return (torch.ones(1),)\n",
        "raising.py")
    short, long, *_fresh = make_repros(raising, Verdict.MISMATCH, result=None)
    assert "assert actual == expected" in short and not verify(short).reproduces
    result = verify(long)
    assert result.reproduces and "ValueError" in result.output, result.output


def test_a_repro_that_fails_for_the_program_s_own_reasons_is_not_believed():
    # state the eager run leaves behind makes the compiled run differ in one process
    stateful = Program.from_source(
        "import torch\nCALLS = []\n\ndef fn(x):\n    return x\n\ndef inputs():\n    return (torch.ones(1),)\n\n"
        "def drive(f):\n    CALLS.append(1)\n    return len(CALLS)\n", "stateful.py")
    result = verify(harness_repro(stateful))
    assert not result.reproduces and result.exit_code == 1 and result.control_exit_code == 1
    assert "not the compiler" in result.describe()


@pytest.mark.soak  # a campaign long enough to reduce in the background: 90 s
def test_fuzzing_goes_on_while_findings_are_reduced_in_the_background(tmp_path: Path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "small_bug.py").write_text(SMALL_BUG)
    for name in ("E3_closures/nonlocal_shared_cells.py", "C_iterators/map_filter_zip_enumerate.py"):
        shutil.copy(ROOT / "seeds" / name, seeds / Path(name).name)
    out = tmp_path / "campaign"
    # the whole share, so that the small reduction surely ends within the run (at the default
    # quarter it would take about as long as the run itself)
    proc = cli("fuzz", "--no-ui", "-j", "2", "--corpus", str(seeds), "--out", str(out), "--time", "75s",
               "--reduce-share", "1.0")
    assert proc.returncode == 0, proc.stderr[-3000:]
    counters = json.loads((out / "stats.json").read_text())["counters"]
    assert counters["execs"] >= 60  # the loop kept going (about 2/s on two workers)
    [finding] = [p.parent for p in out.glob("findings/*/finding.json") if "small_bug" in p.read_text()]
    assert "findings reduced in the background" in proc.stdout and "reduced" in counters
    # the reduction's runs jump the pool's queue, so it ends within the run (and, reductions
    # being quick, another finding's may too)
    assert counters["reduced"] >= 1 and (finding / "reduced.py").exists(), (counters, proc.stdout[-2000:])
    reduced = (finding / "reduced.py").read_text()
    assert "SCALE" not in reduced and "is_compiling" in reduced
    assert plain_python(finding / "repro.py").returncode == 1

    plot = cli("plot", str(out))
    assert plot.returncode == 0 and (out / "plot.png").stat().st_size > 10_000


def test_a_globals_divergence_is_reproduced_by_comparing_globals_from_a_fresh_start():
    program = Program.from_source(
        "import torch\nSEEN = {}\n\ndef fn(x):\n    SEEN['compiled' if torch.compiler.is_compiling() else 'eager'] = 1\n"
        "    return x\n\ndef inputs():\n    return (torch.ones(1),)\n", "seen.py")
    assert verify(harness_repro(program)).exit_code == 0  # the results agree
    result = verify(harness_repro(program, with_globals=True))
    assert result.reproduces and "SEEN" in result.output, result.output


LYING = ROOT / "tests/fixtures/reduce/lying_class_two_errors.py"
SWALLOWED = ROOT / "tests/fixtures/reduce/swallowed_internal_error.py"


def test_a_reduction_does_not_slide_to_another_error_at_the_same_site(pool, checker):
    from mutator.findings.signature import Signature
    from mutator.reduce.reducer import Reducer

    program = load_program(LYING)
    reducer = Reducer(pool, workers=2)
    target = reducer.target(program)
    assert "is not hashable" in target.first.judgement.exception.message
    # the greedy step that slid before the predicate kept the message: one statement less,
    # the same signature, another error
    slid = program.source.replace("        self.target = Shadow\n", "")
    other = checker.check(Program.from_source(slid, LYING.name))
    assert Signature.of(other) == target.signature, other.reason
    assert "issubclass() arg 1 must be a class" in other.judgement.exception.message
    assert reducer.interesting([slid], target) == [False]

    reduction = reducer.reduce(program, target=target)
    assert reduction.confirmed and "STEPS" not in reduction.reduced.source
    assert "is not hashable" in reduction.check.judgement.exception.message, reduction.reduced.source
    assert "self.target = Shadow" in reduction.reduced.source


def test_a_crash_the_program_catches_gets_a_repro_that_shows_the_internal_error(tmp_path: Path):
    copy = tmp_path / SWALLOWED.name
    shutil.copy(SWALLOWED, copy)
    proc = cli("reduce", "--json", "--no-ablation", "--matters-budget", "0", "-j", "2", str(copy))
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    assert data["confirmed"] and data["repro_reproduces"], data
    reduced = plain_python(tmp_path / f"{copy.stem}.reduced.py")
    assert reduced.returncode == 0  # the program's own check swallows it ...
    repro = plain_python(tmp_path / f"{copy.stem}.repro.py")
    assert repro.returncode == 1 and "InternalTorchDynamoError" in repro.stderr, repro.stderr[-2000:]  # ... not here
