"""A finding judged on another torch, through a second interpreter: `mutate run --python`,
`mutate versions` and `mutate report --versions`.

The second interpreter is a venv the test makes from this machine's Python with the same
torch (its site-packages on the path through a .pth file): the mechanism, not the release,
is under test. What makes it "another torch" is a sitecustomize.py in it that patches one
Dynamo behaviour the fixture programs depend on, `format()`, and gives it a newer version
(2.99.0). Dynamo 2.13.0 and 2.14.1 fold `format(6, "b")` as `"6".format("b")` (a real bug: '6', where
eager gives '110'); the "fixed" torch folds it as Python does, so the finding is fixed since
2.99.0. The "regressed" torch breaks `format("layer")` (its repr), which 2.14.1 gets right:
a regression in 2.99.0.

A third interpreter stands for another Python with the same torch: the "regressed" patch
without the new version, and `platform.python_version()` (what a worker reports as its build's
Python) saying 3.13.0. It is this machine's 3.11 all the same (CI has one Python with torch):
what is under test is that `mutate versions` keeps each interpreter's Python, tells entries of
one torch apart by it, and that the status names the Python the bug is live on, not how a
real 3.13 traces."""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from mutator.core.program import Program
from mutator.exec.pool import WorkerPool
from mutator.core.observation import RunConfig
from mutator.core.verdict import Verdict
from mutator.findings.store import FindingStore
from mutator.judge.check import Checker

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
THIS_TORCH = importlib.metadata.version("torch").split("+")[0]  # the torch of this venv, either supported release

_PATCH = '''
import torch
from torch._dynamo.variables.builtin import BuiltinVariable
from torch._dynamo.variables.constant import ConstantVariable

_traced = BuiltinVariable.call_format


def _constants(*variables):
    return all(v.is_python_constant() for v in variables)


{handler}


BuiltinVariable.call_format = call_format
torch.__version__ = torch.version.__version__ = "2.99.0"
'''
FIXED = _PATCH.format(handler='''\
def call_format(self, tx, value, *args, **kwargs):  # format(value, spec) as Python computes it
    if self.fn is format and not kwargs and _constants(value, *args):
        return ConstantVariable.create(format(value.as_python_constant(), *(a.as_python_constant() for a in args)))
    return _traced(self, tx, value, *args, **kwargs)''')
REGRESSED = _PATCH.format(handler='''\
def call_format(self, tx, value, *args, **kwargs):  # format() of a str gives its repr
    if self.fn is format and not args and not kwargs and _constants(value) and \\
            isinstance(value.as_python_constant(), str):
        return ConstantVariable.create(repr(value.as_python_constant()))
    return _traced(self, tx, value, *args, **kwargs)''')

# the regressed Dynamo, its torch's own version, on a "Python 3.13"
ON_PYTHON_313 = REGRESSED.replace('torch.__version__ = torch.version.__version__ = "2.99.0"\n',
                                  'import platform\nplatform.python_version = lambda: "3.13.0"\n')

SPEC = '''\
import torch


def fn(x):
    return x + 1, format(x.shape[0], "b")


def inputs():
    return (torch.ones(6),)
'''
PLAIN = '''\
import torch

NAME = "layer"


def fn(x):
    return x + 1, format(NAME)


def inputs():
    return (torch.ones(3),)
'''


def repro_of(source: str) -> str:
    """A reproducer in the shape `mutate reduce` writes: exits 1 while compiled differs."""
    return source + textwrap.dedent('''

        expected = fn(*inputs())[1]
        actual = torch.compile(fn, backend="eager")(*inputs())[1]
        print("eager:   ", repr(expected))
        print("compiled:", repr(actual))
        assert actual == expected, f"eager {expected!r}, compiled {actual!r}"
    ''')


def make_torch(directory: Path, sitecustomize: str) -> Path:
    """A venv of this machine's Python that imports this venv's packages (torch and the
    package's dependencies) and patches them at start; its python."""
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", "--system-site-packages", str(directory)],
                   check=True)
    python = directory / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    ours = sysconfig.get_paths()["purelib"]
    # addsitedir, not a bare path line: this venv's own .pth files (the editable install) are read too
    (site / "zz_mutator_test.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    (site / "sitecustomize.py").write_text(sitecustomize)
    return python


def mutate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          timeout=1200, cwd=ROOT)


def file_finding(campaign: Path, source: str, name: str, checker: Checker) -> Path:
    """The fixture checked on `checker`'s torch and filed as a finding, reduced (to itself) with
    its repro.py; its directory."""
    result = checker.check(Program.from_source(source, name))
    assert result.verdict is Verdict.MISMATCH, result.reason
    finding, _ = FindingStore(campaign).record(result, provenance=f"seed:{name}", parent=None, elapsed=1.0)
    directory = campaign / finding.directory
    (directory / "reduced.py").write_text(source)
    (directory / "repro.py").write_text(repro_of(source))
    return directory


@pytest.fixture(scope="module")
def torches(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("torches")
    return {"fixed": make_torch(root / "fixed", FIXED), "regressed": make_torch(root / "regressed", REGRESSED)}


def test_mutate_run_judges_on_the_other_interpreter_s_torch(torches, tmp_path: Path):
    (tmp_path / "spec.py").write_text(SPEC)
    result = mutate("run", str(tmp_path / "spec.py"), "--python", str(torches["fixed"]), "--json", "-j", "1")
    assert result.returncode == 0, result.stderr
    [row] = json.loads(result.stdout)
    assert row["verdict"] == "PASS" and row["torch"]["torch"] == "2.99.0", row
    assert row["torch"]["executable"] == str(torches["fixed"]) and row["driver"]["executable"] == sys.executable


@pytest.mark.soak  # a campaign's finding judged on two torches: 27 s
def test_a_bug_the_newer_torch_fixed_is_fixed_since_it(torches, checker, tmp_path: Path):
    campaign = tmp_path / "campaign"
    directory = file_finding(campaign, SPEC, "spec.py", checker)  # found on this venv's torch
    # the newer torch named as a user types it, relative to where mutate runs: its repro.py runs
    # in the finding's directory, where only the absolute path still names that interpreter
    relative = os.path.relpath(torches["fixed"], ROOT)
    result = mutate("versions", str(directory), "--python", sys.executable, "--python", relative, "-j", "1")
    assert result.returncode == 0, result.stderr
    record = json.loads((directory / "finding.json").read_text())["versions"]
    assert record["status"] == "fixed_since" and record["since"] == "2.99.0", record["line"]
    old, new = record["torches"]
    assert old["build"]["torch"].split("+")[0] == THIS_TORCH and new["build"]["torch"] == "2.99.0"
    assert new["build"]["executable"] == str(torches["fixed"]), new["build"]
    assert [(p["program"], p["verdict"], p["same"]) for p in old["programs"]] == [("reduced", "MISMATCH", True),
                                                                                  ("smallest", "MISMATCH", True)]
    assert [p["verdict"] for p in new["programs"]] == ["PASS", "PASS"]
    assert (old["repro_exit"], new["repro_exit"]) == (1, 0)
    assert "fixed_since" in result.stdout
    report = mutate("report", str(campaign), "--no-ablation", "--json")
    assert report.returncode == 0, report.stderr
    [row] = json.loads(report.stdout)
    assert row["versions"] == "fixed_since" and row["title"].startswith("[fixed since torch 2.99.0] [dynamo]")
    text = (directory / "report.md").read_text()
    assert "| torch | Python | reduced.py | smallest.py | repro.py |" in text and "| PASS | PASS | exit 0 |" in text
    # 2.99.0 is no release with a known date: no nightly range is made up
    assert "The date of torch 2.99.0 is not known" in text and "bisect-nightlies" not in text


@pytest.mark.soak  # two torches, a reduction: 40 s
def test_a_bug_only_the_newer_torch_has_is_a_regression_in_it(torches, tmp_path: Path):
    campaign = tmp_path / "campaign"
    with WorkerPool(workers=1, config=RunConfig(timeout=60), python=str(torches["regressed"])) as pool:
        directory = file_finding(campaign, PLAIN, "plain.py", Checker(pool))  # found on the regressed torch
    result = mutate("report", str(campaign), "--no-ablation", "--json", "--versions", sys.executable,
                    "--versions", str(torches["regressed"]), "-j", "1")
    assert result.returncode == 0, result.stderr
    [row] = json.loads(result.stdout)
    assert row["versions"] == "regression" and row["title"].startswith("[regression in 2.99.0] [dynamo]"), row
    record = json.loads((directory / "finding.json").read_text())["versions"]
    assert [t["repro_exit"] for t in record["torches"]] == [0, 1]
    assert f"**regression in 2.99.0: passes on {THIS_TORCH}" in (directory / "report.md").read_text()


def test_mutate_reduce_verifies_the_repro_on_the_torch_under_test(torches, tmp_path: Path):
    """The bug is only on the other interpreter's torch: the reduction runs there, and so must
    repro.py's verification (with the driver's python it would pass and be thrown away)."""
    padded = PLAIN.replace('NAME = "layer"', 'NAME = "layer"\nUNUSED = [1, 2, 3]')
    (tmp_path / "plain.py").write_text(padded)
    result = mutate("reduce", str(tmp_path / "plain.py"), "--python", str(torches["regressed"]), "--no-ablation",
                    "--json", "-j", "1", "--out", str(tmp_path / "reduced.py"))
    assert result.returncode == 0, result.stderr[-3000:]
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["confirmed"] and data["repro_reproduces"], data["repro"]
    assert "UNUSED" not in (tmp_path / "reduced.py").read_text()


@pytest.mark.soak  # a venv of another Python: 30 s
def test_a_bug_of_one_python_is_live_only_on_that_python(tmp_path: Path):
    python_313 = make_torch(tmp_path / "py313", ON_PYTHON_313)
    campaign = tmp_path / "campaign"
    with WorkerPool(workers=1, config=RunConfig(timeout=60), python=str(python_313)) as pool:
        pool.wait_ready()
        assert pool.build.python == "3.13.0" and pool.build.torch.split("+")[0] == THIS_TORCH
        torch = pool.build.torch
        directory = file_finding(campaign, PLAIN, "plain.py", Checker(pool))
    result = mutate("versions", str(directory), "--python", sys.executable, "--python", str(python_313), "-j", "1")
    assert result.returncode == 0, result.stderr
    record = json.loads((directory / "finding.json").read_text())["versions"]
    assert record["status"] == "live_on_newest" and record["pythons"] == ["3.13"], record["line"]
    assert record["line"].startswith(f"live on torch {torch} only on Python 3.13"), record["line"]
    this, other = record["torches"]
    assert (this["python"], other["python"]) == (platform.python_version(), "3.13.0")
    assert this["build"]["torch"] == other["build"]["torch"]
    assert [p["verdict"] for p in this["programs"]] == ["PASS", "PASS"] and this["repro_exit"] == 0
    assert [p["verdict"] for p in other["programs"]] == ["MISMATCH", "MISMATCH"] and other["repro_exit"] == 1
    assert "py3.13" in result.stdout  # its column in the table printed
