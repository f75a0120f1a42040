"""The finding store: one directory per signature with its smallest programs, merges after
reduction (and finishing one a kill cut short), and findings that cannot be read."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner

from mutator.commands.report import report
from mutator.core.program import Program
from mutator.core.verdict import Verdict
from mutator.findings.store import FindingStore
from mutator.judge.compare import Divergence

from tests.helpers import exc
from tests.unit.findings.helpers import PROGRAM, TWO, crashed, judged, two_findings


def test_store_keeps_one_directory_per_signature_and_the_smallest_program(tmp_path: Path):
    store = FindingStore(tmp_path, torch_version="2.13.0")
    crash = exc("AssertionError", dynamo=True)
    big = replace(judged(Verdict.CRASH, exception=crash), program=Program.from_source(PROGRAM.source + "# pad\n" * 20, "b.py"))
    small = judged(Verdict.CRASH, exception=crash)
    finding, new = store.record(big, provenance="X.a@fn:1", parent=3, elapsed=1.0)
    assert new
    _, new_again = store.record(small, provenance="X.b@fn:1", parent=4, elapsed=2.0)
    assert not new_again
    directory = tmp_path / finding.directory
    assert (directory / "first.py").read_text() == big.program.source
    assert (directory / "smallest.py").read_text() == small.program.source
    data = json.loads((directory / "finding.json").read_text())
    assert data["hits"] == 2 and [h["provenance"] for h in data["history"]] == ["X.a@fn:1", "X.b@fn:1"]
    assert "mutate run" in (directory / "README.md").read_text()
    assert FindingStore(tmp_path).findings[finding.signature].hits == 2  # reloads from disk
    assert "a frontend bug" in (directory / "README.md").read_text()
    hang = judged(Verdict.HANG)
    hang_finding, _ = store.record(hang, provenance="p", parent=None, elapsed=3.0)
    assert hang_finding.directory.startswith("hangs/")
    gb = exc("torch._dynamo.exc.Unsupported", gb_type="Unsupported context manager")
    low, _ = store.record(judged(Verdict.FULLGRAPH_BREAK, exception=gb), provenance="p", parent=None, elapsed=4.0)
    assert "**severity**: low" in (tmp_path / low.directory / "README.md").read_text()


def test_one_signature_keeps_the_smallest_program_of_each_trigger(tmp_path: Path):
    from mutator.findings.finding import MAX_VARIANTS, trigger

    assert trigger("seed:seeds/others/format_and_mappingproxy.py") == "seed format_and_mappingproxy"
    assert trigger("E2.wrap_in_try@fn:3+A3.dunder_class@fn:9+E2.reraise@fn:4") == "A3+E2"
    store = FindingStore(tmp_path)
    value = Divergence("result", "call 1", "value", "d", False, "str")

    def hit(provenance: str, pad: int = 0):  # type: ignore[no-untyped-def]
        result = replace(judged(Verdict.MISMATCH, divergence=value),
                         program=Program.from_source(PROGRAM.source + "# pad\n" * pad, "p.py"))
        return store.record(result, provenance=provenance, parent=None, elapsed=1.0)[0]

    hit("seed:seeds/A3/subclass_format.py", pad=3)
    hit("seed:seeds/others/format_and_mappingproxy.py", pad=5)  # larger: not smallest.py, but kept
    hit("B1.view@fn:2", pad=9)
    finding = hit("B1.view@fn:7+B1.other@fn:1", pad=1)  # the same trigger, smaller: replaces it
    directory = tmp_path / finding.directory
    assert finding.hits == 4 and set(finding.variants) == {"seed subclass_format", "seed format_and_mappingproxy", "B1"}
    assert finding.variants["B1"]["hits"] == 2 and finding.variants["B1"]["size"] == len(PROGRAM.source) + 6
    assert sorted(p.name for p in (directory / "variants").iterdir()) == \
        ["00-seed-subclass_format.py", "01-seed-format_and_mappingproxy.py", "02-B1.py"]
    assert (directory / "variants" / "01-seed-format_and_mappingproxy.py").read_text().count("# pad") == 5
    readme = (directory / "README.md").read_text()
    assert "| B1 | 2 | `variants/02-B1.py` |" in readme and "## Smallest program" in readme
    reloaded = FindingStore(tmp_path).findings[finding.signature]
    assert reloaded.variants == finding.variants and reloaded.details == finding.details
    for n in range(MAX_VARIANTS + 3):  # triggers beyond the cap count as hits, without a program
        hit(f"X{n}.op@fn:1")
    assert len(finding.variants) == MAX_VARIANTS and finding.hits == 4 + MAX_VARIANTS + 3
    assert len(list((directory / "variants").iterdir())) == MAX_VARIANTS


# -- merges -----------------------------------------------------------------------------------

def test_a_merge_moves_the_directory_and_later_hits_follow_it(tmp_path: Path):
    store, first, second = two_findings(tmp_path)
    store.merge(second, into=first)
    moved = tmp_path / first.directory / "merged" / Path(second.directory).name
    assert moved.is_dir() and not (tmp_path / second.directory).exists()
    assert first.hits == 2 and "Merged after reduction" in (tmp_path / first.directory / "README.md").read_text()
    store.record(crashed("ValueError", TWO, "c.py"), provenance="B1.z@fn:1", parent=3, elapsed=3.0)
    assert first.hits == 3 and not (tmp_path / second.directory).exists()
    reloaded = FindingStore(tmp_path)
    assert list(reloaded.findings) == [first.signature]
    assert reloaded.aliases == {second.signature: first.signature}


def test_a_merge_cut_short_before_the_move_is_finished_on_the_next_load(tmp_path: Path):
    store, first, second = two_findings(tmp_path)
    store.merge(second, into=first)
    moved = tmp_path / first.directory / "merged" / Path(second.directory).name
    shutil.move(str(moved), str(tmp_path / second.directory))  # as if killed between the record and the move
    reloaded = FindingStore(tmp_path)
    assert list(reloaded.findings) == [first.signature] and moved.is_dir()
    assert not (tmp_path / second.directory).exists()


def test_the_record_of_a_merge_is_written_before_the_move(tmp_path: Path, monkeypatch):
    store, first, second = two_findings(tmp_path)
    seen = {}
    real_rename = Path.rename

    def rename(self, target):
        seen["record"] = json.loads((tmp_path / first.directory / "finding.json").read_text())["merged"]
        return real_rename(self, target)
    monkeypatch.setattr(Path, "rename", rename)
    store.merge(second, into=first)
    assert seen["record"] and seen["record"][0]["moved_from"] == second.directory


# -- a finding that cannot be read is left alone and said -------------------------------------

def test_a_finding_that_cannot_be_read_is_left_alone_and_reported(tmp_path: Path):
    spoilt = tmp_path / "findings" / "mismatch-x"
    spoilt.mkdir(parents=True)
    (spoilt / "finding.json").write_text("[1, 2")
    (spoilt / "first.py").write_text("print(1)\n")
    store = FindingStore(tmp_path)
    assert store.findings == {} and len(store.unreadable) == 1 and "finding.json" in store.unreadable[0]
    result = CliRunner().invoke(report, [str(tmp_path)])
    assert "warning: " in result.output and "finding.json: unreadable" in result.output
    assert (spoilt / "finding.json").read_text() == "[1, 2" and (spoilt / "first.py").exists()


def test_a_new_hit_of_an_unreadable_findings_signature_is_filed_beside_it(tmp_path: Path):
    from mutator.judge.check import CheckResult
    from mutator.core.observation import ExecResult, Mode, Outcome
    from mutator.judge.oracle import Oracle
    from mutator.core.program import Program
    from mutator.findings.signature import Signature

    program = Program.from_source("import torch\ndef fn(x):\n    return x\ndef inputs():\n    return (torch.ones(1),)\n",
                                  "p.py")
    eager = ExecResult(program.name, Mode.EAGER, Outcome.COMPLETED)
    compiled = ExecResult(program.name, Mode.COMPILED, Outcome.RAISED, detail="raised RuntimeError: boom")
    result = CheckResult(program, Oracle().judge(eager, compiled, program=program), (eager, compiled))
    spoilt = tmp_path / "findings" / Signature.of(result).slug()
    spoilt.mkdir(parents=True)
    (spoilt / "finding.json").write_text("{")
    (spoilt / "first.py").write_text("theirs\n")
    store = FindingStore(tmp_path)
    store.record(result, provenance="seed", parent=None, elapsed=1.0)
    assert (spoilt / "finding.json").read_text() == "{" and (spoilt / "first.py").read_text() == "theirs\n"
    assert (spoilt.parent / (spoilt.name + "-again") / "first.py").read_text() == program.source
