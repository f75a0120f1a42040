"""What the findings, campaign, reduce and report tests file: check results and findings of tiny programs."""

from __future__ import annotations

from pathlib import Path

from mutator.core.program import Program
from mutator.core.verdict import Verdict
from mutator.findings.store import FindingStore
from mutator.judge.check import CheckResult
from mutator.judge.oracle import Judgement

from tests.helpers import compiled_run, exc, run


PROGRAM = Program.from_source("def fn(x):\n    return x\ndef inputs():\n    return (1,)\n", "p.py")


def judged(verdict: Verdict, *, exception=None, divergence=None, compiled=None) -> CheckResult:
    judgement = Judgement(verdict, "because", exception=exception, divergence=divergence)
    return CheckResult(PROGRAM, judgement, (run(), compiled or compiled_run()))


ONE = '''\
import torch


class Box(dict):
    """A docstring."""
    def keys(self):
        return ["a"]


def fn(x):
    return x + len(Box(a=1, b=2))


def inputs():
    return (torch.ones(3),)
'''

TWO = ONE.replace("Box", "Bag").replace("a=1, b=2", "a=5, b=7").replace('    """A docstring."""\n', "")


def crashed(location_type: str, source: str, name: str) -> CheckResult:
    judgement = Judgement(Verdict.CRASH, f"the compiled run raised {location_type}",
                          exception=exc(location_type, dynamo=True))
    return CheckResult(Program.from_source(source, name), judgement, (run(), compiled_run()))


def two_findings(root: Path):
    store = FindingStore(root)
    first, _ = store.record(crashed("TypeError", ONE, "a.py"), provenance="A1.x@fn:1", parent=1, elapsed=1.0)
    second, _ = store.record(crashed("ValueError", TWO, "b.py"), provenance="B1.y@fn:1", parent=2, elapsed=2.0)
    return store, first, second
