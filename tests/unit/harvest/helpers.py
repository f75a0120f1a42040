"""A harvester whose checks pass every program, for the harvest tests."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from mutator.core.program import Program
from mutator.core.verdict import Verdict
from mutator.findings.store import FindingStore
from mutator.harvest.harvester import Harvester
from mutator.judge.check import CheckResult
from mutator.judge.oracle import Judgement

from tests.helpers import compiled_run, run


def passing(program: Program) -> CheckResult:
    """Every program passes, with features of its own (so none is a duplicate)."""
    features = frozenset({hash(program.source) % 10**6})
    return CheckResult(program, Judgement(Verdict.PASS, "same"), (run(), replace(compiled_run(), features=features)))


def harvester(out: Path, check=passing) -> Harvester:
    return Harvester(check, FindingStore(out), out, torch_version="2.test", workers=1)
