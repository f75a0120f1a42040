"""The programs an output directory holds, as harvest and generate both know them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from mutator.core import storage
from mutator.core.program import Program
from mutator.core.verdict import Verdict
from mutator.harvest.kept import HEADER, KnownPrograms, body_digest
from mutator.judge.check import CheckResult
from mutator.judge.oracle import Judgement

from tests.helpers import compiled_run, run

SOURCE = "import torch\ntorch.compile(abs)(torch.ones(1))\n"


def passing(features: frozenset[int]) -> CheckResult:
    return CheckResult(Program.from_source(SOURCE, "p.py"), Judgement(Verdict.PASS, "same"),
                       (run(), replace(compiled_run(), features=features)))


def test_a_program_repeats_one_by_text_without_its_header_or_by_coverage(tmp_path: Path):
    known = KnownPrograms(tmp_path)
    known.keep(tmp_path / "a.py", f"{HEADER}x\n# on today\n{SOURCE}", {"origin": "x"}, body_digest(SOURCE),
               passing(frozenset({1, 2})))
    assert json.loads((tmp_path / "a.json").read_text())["origin"] == "x"
    again = KnownPrograms(tmp_path)  # read back from the directory
    assert again.repeats(body_digest(f"{HEADER}y\n# on another day\n{SOURCE}"), passing(frozenset({9})))
    assert again.repeats("another text", passing(frozenset({1, 2})))
    assert not again.repeats("another text", passing(frozenset({1, 3})))
    assert not again.repeats("another text", passing(frozenset()))  # no coverage recorded: the text decides


def test_a_program_whose_sidecar_cannot_be_written_is_not_left_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def refuse(path, data):  # type: ignore[no-untyped-def]
        raise OSError("disk full")

    monkeypatch.setattr(storage, "write_json", refuse)
    known = KnownPrograms(tmp_path)
    with pytest.raises(OSError):
        known.keep(tmp_path / "a.py", SOURCE, {}, body_digest(SOURCE), passing(frozenset({1})))
    assert not (tmp_path / "a.py").exists() and not known.repeats(body_digest(SOURCE), passing(frozenset({1})))
