"""On which torch a finding fails: the status from the newest torch, the record in finding.json,
report.md's Versions table and bisect command, and VersionJudge against a scripted runner."""

from __future__ import annotations

import json
import sys
from concurrent.futures import Future
from pathlib import Path

import pytest

from mutator.core.build import Build
from mutator.core.observation import Mode
from mutator.findings.signature import Signature
from mutator.findings.store import FindingStore
from mutator.judge.check import CheckResult
from mutator.judge.oracle import Judgement
from mutator.core.program import Program
from mutator.core.verdict import Verdict
from mutator.report import releases
from mutator.report.campaigns import Campaigns
from mutator.report.issue import report_markdown, summary_row, title
from mutator.report.version_judge import Torch, VersionJudge
from mutator.report.versions import OnTorch, ProgramVerdict, Versions, markdown, recorded

from tests.helpers import call, compiled_run, run, tensor

OURS = Signature("MISMATCH", observation="result:value")
OTHER = Signature("CRASH", exception="TypeError", location="torch/_dynamo/variables/builder.py:_wrap")
OLD = Build(torch="2.13.0+cpu", git="cf30153c4c131c8164ee7798e5022d810682e2cb", python="3.11.7")
HARNESS = "def fn(x):\n    return x{mark}\n\n\ndef inputs():\n    return (1,)\n"
NEW = Build(torch="2.14.1+cu130", git="5c4886908584029761b579af026dcfb627c84070", cuda="13.0", python="3.11.7")


def fails(program: str, signature: Signature = OURS) -> ProgramVerdict:
    return ProgramVerdict(program, signature.kind, signature, signature == OURS)


def passes(program: str) -> ProgramVerdict:
    return ProgramVerdict(program, "PASS")


def on(build: Build, reduced: ProgramVerdict | None, smallest: ProgramVerdict, repro_exit: int | None = 1) -> OnTorch:
    programs = tuple(p for p in (reduced, smallest) if p is not None)
    return OnTorch(build, programs, repro_exit, "" if repro_exit is None else f"exit {repro_exit}")


def filed(store: FindingStore, name: str, verdict: Verdict = Verdict.MISMATCH, mark: str = ""):
    reason = "call 1 (fn) result: values differ" if verdict is Verdict.MISMATCH else "the compiled run raised TypeError"
    result = CheckResult(Program.from_source(HARNESS.format(mark=mark), name), Judgement(verdict, reason),
                         (run(), compiled_run()))
    finding, _ = store.record(result, provenance=f"seed:{name}", parent=None, elapsed=1.0)
    return finding


def test_failing_with_its_signature_on_the_newest_is_live():
    record = Versions.of([on(OLD, fails("reduced"), fails("smallest")), on(NEW, fails("reduced"), fails("smallest"))])
    assert record.status == "live_on_newest" and record.since == "2.14.1+cu130" and record.marker() == ""
    assert "live on torch 2.14.1+cu130" in record.line


def test_both_programs_passing_and_the_repro_exiting_0_on_the_newest_is_fixed_since_it():
    record = Versions.of([on(NEW, passes("reduced"), passes("smallest"), 0),
                          on(OLD, fails("reduced"), fails("smallest"))])
    assert [t.build for t in record.torches] == [OLD, NEW]  # oldest first, whatever the order given
    assert record.status == "fixed_since" and record.since == "2.14.1+cu130"
    assert record.marker() == "[fixed since torch 2.14.1+cu130] " and "fails on 2.13.0+cpu" in record.line


def test_passing_the_reproducer_is_not_fixed_when_the_program_fails_another_way():
    # the crash became a silent value mismatch: repro.py exits 0, the whole program does not pass
    record = Versions.of([on(OLD, None, fails("smallest", OTHER)),
                          on(NEW, None, fails("smallest", Signature("MISMATCH", observation="globals:value")), 0)])
    assert record.status == "changed" and record.since == "2.14.1+cu130"
    assert "not with the finding's signature" in record.line


def test_a_reduced_program_that_slid_to_another_bug_is_told_apart_from_the_original():
    # the reduced program's other error was fixed on the newest; the smallest program's bug is still live
    record = Versions.of([on(OLD, fails("reduced", OTHER), fails("smallest")),
                          on(NEW, passes("reduced"), fails("smallest"))])
    assert record.status == "changed" and "reduce again" in record.line
    assert "the reduced program ends PASS while the smallest still fails" in record.line


def test_passing_on_an_older_torch_and_failing_on_the_newer_is_a_regression():
    record = Versions.of([on(OLD, passes("reduced"), passes("smallest"), 0),
                          on(NEW, fails("reduced"), fails("smallest"))])
    assert record.status == "regression" and record.marker() == "[regression in 2.14.1+cu130] "
    assert record.differing() == (record.torches[0], record.torches[1])


def test_another_signature_on_an_older_torch_is_changed():
    record = Versions.of([on(OLD, fails("reduced", OTHER), fails("smallest", OTHER)),
                          on(NEW, fails("reduced"), fails("smallest"))])
    assert record.status == "changed" and record.since == "2.13.0+cpu"


def test_an_unreduced_finding_is_judged_by_its_smallest_program_alone():
    record = Versions.of([on(NEW, None, passes("smallest"), None)])
    assert record.status == "fixed_since" and "on 2.14.1+cu130 smallest.py passes (it has no repro.py)" in record.line


def test_the_record_survives_finding_json(tmp_path: Path):
    store = FindingStore(tmp_path)
    finding = filed(store, "p.py")
    record = Versions.of([on(OLD, None, fails("smallest")), on(NEW, None, passes("smallest"), 0)])
    finding.versions = record.as_json()
    store.save(finding)
    again = FindingStore(tmp_path).findings[finding.signature]
    assert recorded(again) == record and again.versions["status"] == "fixed_since"
    assert title(again).startswith("[fixed since torch 2.14.1+cu130] [dynamo]")
    row = summary_row(again)
    assert row["versions"] == "fixed_since" and row["versions_line"] == record.line


def test_report_md_has_the_versions_table_and_the_bisect_between_the_releases_that_differ(tmp_path: Path):
    store = FindingStore(tmp_path)
    finding = filed(store, "p.py")
    finding.versions = Versions.of([on(OLD, fails("reduced"), fails("smallest")),
                                    on(NEW, passes("reduced"), passes("smallest"), 0)]).as_json()
    text = report_markdown(finding, repro_source="print(1)\n", versions={"torch": "2.13.0+cpu"})
    assert "**fixed since torch 2.14.1+cu130" in text
    assert "| torch | Python | reduced.py | smallest.py | repro.py |" in text
    assert "| torch 2.13.0+cpu (git cf30153, CPU build) | 3.11.7 | MISMATCH (same signature) | " \
           "MISMATCH (same signature) | exit 1 |" in text
    assert "| PASS | PASS | exit 0 |" in text
    # the reproducer passes on the newer one: the good date is 2.14.1's, the bad one 2.13.0's
    assert ("scripts/bisect-nightlies.sh repro.py --good 20260930 --bad 20260703 --nightly-versions 2.14.0,2.15.0"
            in text)
    assert "the fix landed between them" in text and "built 2026-07-03" in text


def test_report_md_bisects_between_2_14_1_and_2_15_0_on_the_days_the_index_gives(tmp_path: Path, monkeypatch):
    """The dates come from the package index (here a file standing in for PyPI's JSON API),
    kept in MUTATOR_CACHE."""
    index = tmp_path / "torch.json"
    files = {"2.14.1": [{"python_version": "cp311", "upload_time": "2026-09-30T17:43:48"}],
             "2.15.0": [{"python_version": "cp313", "upload_time": "2026-10-28T15:16:25"},
                        {"python_version": "cp311", "upload_time": "2026-10-28T15:16:30"}]}
    index.write_text(json.dumps({"info": {"version": "2.15.0"}, "releases": files}))
    monkeypatch.setenv("MUTATOR_TORCH_INDEX", index.as_uri())
    monkeypatch.setenv("MUTATOR_CACHE", str(tmp_path / "cache"))
    store = FindingStore(tmp_path / "campaign")
    finding = filed(store, "p.py")
    newest = Build(torch="2.15.0+cu132", git="a" * 40, cuda="13.2", python="3.11.7")
    finding.versions = Versions.of([on(NEW, fails("reduced"), fails("smallest")),
                                    on(newest, passes("reduced"), passes("smallest"), 0)]).as_json()
    text = report_markdown(finding, repro_source="print(1)\n", versions={"torch": "2.14.1+cu130"})
    assert ("scripts/bisect-nightlies.sh repro.py --good 20261028 --bad 20260930 --nightly-versions 2.15.0,2.16.0"
            in text)
    assert f"2.15.0+cu132: uploaded to {index.as_uri()} 2026-10-28" in text
    assert f"2.14.1+cu130: uploaded to {index.as_uri()} 2026-09-30" in text
    assert (tmp_path / "cache" / "torch-index.json").is_file()


# -- (torch, Python): the Pythons of the newest torch -----------------------------------------

def with_python(build: Build, python: str) -> Build:
    return Build(torch=build.torch, git=build.git, cuda=build.cuda, python=python)


NEW_311, NEW_312, NEW_313 = (with_python(NEW, p) for p in ("3.11.7", "3.12.1", "3.13.0"))


def test_live_on_every_python_of_the_newest_torch_names_them_all():
    record = Versions.of([on(NEW_313, fails("reduced"), fails("smallest")),
                          on(NEW_311, fails("reduced"), fails("smallest")),
                          on(OLD, fails("reduced"), fails("smallest"))])
    assert [(t.torch, t.python) for t in record.torches] == [("2.13.0+cpu", "3.11"), ("2.14.1+cu130", "3.11"),
                                                            ("2.14.1+cu130", "3.13")]
    assert record.status == "live_on_newest" and record.pythons == ("3.11", "3.13")
    assert record.line.startswith("live on torch 2.14.1+cu130 with Python 3.11 and 3.13, the newest given")
    assert Versions.from_json(record.as_json()) == record
    assert [t["python"] for t in record.as_json()["torches"]] == ["3.11.7", "3.11.7", "3.13.0"]


def test_a_bug_of_one_python_only_says_so_and_what_the_others_do():
    record = Versions.of([on(NEW_311, passes("reduced"), passes("smallest"), 0),
                          on(NEW_313, fails("reduced"), fails("smallest"))])
    assert record.status == "live_on_newest" and record.pythons == ("3.13",)
    assert record.line.startswith("live on torch 2.14.1+cu130 only on Python 3.13, the newest given: both programs "
                                  "fail with its signature; with Python 3.11: fixed since torch 2.14.1+cu130")
    assert record.marker() == ""  # live: the title stays the bug's


def test_a_bug_of_the_newer_pythons_is_only_with_the_first_of_them_on():
    record = Versions.of([on(NEW_311, passes("reduced"), passes("smallest"), 0),
                          on(NEW_312, fails("reduced"), fails("smallest")),
                          on(NEW_313, fails("reduced"), fails("smallest"))])
    assert record.pythons == ("3.12", "3.13") and "only with Python 3.12+" in record.line


def test_each_python_is_held_against_its_own_older_torch():
    # 2.13.0 passed with Python 3.11: a regression there; 3.13 has no older torch given: live
    record = Versions.of([on(OLD, passes("reduced"), passes("smallest"), 0),
                          on(NEW_311, fails("reduced"), fails("smallest")),
                          on(NEW_313, fails("reduced"), fails("smallest"))])
    assert record.status == "regression" and record.pythons == ("3.11", "3.13")
    assert record.line.startswith("regression in 2.14.1+cu130 with Python 3.11: passes on 2.13.0+cpu")
    assert "; with Python 3.13: live on torch 2.14.1+cu130, the newest given" in record.line
    assert record.differing() == (record.torches[0], record.torches[1])  # the bisect is on Python 3.11


def test_one_python_on_the_newest_torch_is_held_against_the_older_torch_of_that_python():
    # 2.13.0 judged with 3.11 (passes) and 3.13 (fails), 2.14.1 with 3.11 only (fails): a
    # regression in 2.14.1 on 3.11, whatever 2.13.0 did on 3.13
    old_313 = with_python(OLD, "3.13.0")
    record = Versions.of([on(OLD, passes("reduced"), passes("smallest"), 0),
                          on(old_313, fails("reduced"), fails("smallest")),
                          on(NEW_311, fails("reduced"), fails("smallest"))])
    assert record.status == "regression" and record.pythons == ("3.11",)
    assert record.line.startswith("regression in 2.14.1+cu130 with Python 3.11: passes on 2.13.0+cpu")
    assert record.differing() == (record.torches[0], record.torches[2])


def test_another_ending_on_one_python_is_changed_whatever_the_others_do():
    record = Versions.of([on(NEW_311, fails("reduced"), fails("smallest")),
                          on(NEW_313, fails("reduced", OTHER), fails("smallest", OTHER))])
    assert record.status == "changed" and record.pythons == ("3.11",)
    assert record.line.startswith("changed on torch 2.14.1+cu130 with Python 3.13:")


def test_fixed_on_every_python_is_fixed():
    record = Versions.of([on(NEW_311, passes("reduced"), passes("smallest"), 0),
                          on(NEW_313, passes("reduced"), passes("smallest"), 0)])
    assert record.status == "fixed_since" and record.pythons == ()
    assert record.line.startswith("fixed since torch 2.14.1+cu130 with Python 3.11 and 3.13:")


def test_report_md_has_a_row_per_torch_and_python():
    record = Versions.of([on(NEW_311, passes("reduced"), passes("smallest"), 0),
                          on(NEW_313, fails("reduced"), fails("smallest"))])
    text = "\n".join(markdown(record))
    assert "| torch 2.14.1+cu130 (git 5c48869, CUDA 13.0 build) | 3.11.7 | PASS | PASS | exit 0 |" in text
    assert "| torch 2.14.1+cu130 (git 5c48869, CUDA 13.0 build) | 3.13.0 | MISMATCH (same signature) |" in text
    assert "bisect-nightlies" not in text  # one torch: nothing to bisect between Pythons


def test_a_torch_without_a_known_date_gets_no_nightly_range_but_its_commits():
    source_build = Build(torch="2.16.0a0+git1234567", git="1234567abcdef")
    lines = releases.bisect_lines(NEW, source_build)
    assert "The date of torch 2.16.0a0+git1234567 is not known" in lines[1]
    assert "commits 5c48869085..1234567abc" in lines[1] and not any("bisect-nightlies" in line for line in lines)


def test_without_a_failing_reproducer_there_is_no_bisect_command():
    record = Versions.of([on(OLD, None, fails("smallest"), None), on(NEW, None, passes("smallest"), None)])
    text = "\n".join(markdown(record))
    assert "no repro.py to bisect" in text and "bisect-nightlies" not in text


def test_release_dates_and_nightly_versions():
    assert releases.date_of(Build(torch="2.15.0.dev20261001+cpu")).day == "20261001"
    assert releases.date_of(Build(torch="2.14.0+cpu")).day == "20260902"
    assert releases.date_of(Build(torch="2.12.0")) is None  # not in the table: unknown, not guessed
    assert releases.date_of(Build(torch="2.16.0a0+git1234567")) is None
    assert releases.nightly_versions(OLD, NEW) == ["2.14.0", "2.15.0"]
    assert releases.nightly_versions(Build(torch="2.15.0.dev20261001"), Build(torch="2.15.0")) == ["2.15.0", "2.16.0"]
    assert releases.nightly_versions(Build(torch="2.14.0"), Build(torch="3.0.0")) == []


def test_mutate_report_keeps_findings_fixed_since_apart_after_the_bugs_to_file(tmp_path: Path):
    store = FindingStore(tmp_path)
    fixed = filed(store, "a.py")
    live = filed(store, "b.py", Verdict.CRASH, mark="  # b")
    fixed.hits = 50  # more hits: first without versions
    fixed.versions = Versions.of([on(NEW, None, passes("smallest"), 0)]).as_json()
    store.save(fixed)
    assert [r.finding.directory for r in Campaigns([tmp_path]).distinct()] == [live.directory, fixed.directory]


# -- VersionJudge, against a scripted runner ---------------------------------------------------

class ByProgram:
    """Eager always gives 1.0; compiled gives 2.0 for a program that says `# bug`."""

    def submit(self, program, mode, config=None, *, avoid=None):
        future: Future = Future()
        value = 2.0 if mode is Mode.COMPILED and "# bug" in program.source else 1.0
        if mode is Mode.REFERENCE:
            result = run(Mode.REFERENCE, calls=[call(result=tensor([1.0], "torch.float64"))])
        elif mode is Mode.COMPILED:
            result = compiled_run(calls=[call(result=tensor([value]))])
        else:
            result = run(mode, calls=[call(result=tensor([value]))])
        future.set_result(result)
        return future


def _finding_dir(tmp_path: Path, *, reduced: str | None, smallest: str, repro: str | None) -> Path:
    finding = filed(FindingStore(tmp_path), "s.py")
    (tmp_path / finding.directory / "smallest.py").write_text(smallest)
    directory = tmp_path / finding.directory
    if reduced is not None:
        (directory / "reduced.py").write_text(reduced)
    if repro is not None:
        (directory / "repro.py").write_text(repro)
    return directory



def test_the_judge_checks_both_programs_and_runs_the_repro_on_each_torch(tmp_path: Path):
    directory = _finding_dir(tmp_path, reduced=HARNESS.format(mark="  # bug"), smallest=HARNESS.format(mark=""),
                             repro="import sys\nsys.exit(0)\n")  # exit 1 would run its control, importing torch
    judge = VersionJudge([Torch(sys.executable, ByProgram(), OLD), Torch(sys.executable, ByProgram(), NEW)])
    record = judge.judge(directory)
    assert [t.build for t in record.torches] == [OLD, NEW]
    newest = record.newest
    assert newest.program("reduced").verdict == "MISMATCH" and newest.program("smallest").verdict == "PASS"
    assert newest.repro_exit == 0 and "passes with plain python" in newest.repro
    assert record.status == "changed"  # the two programs disagree on the newest


def test_the_judge_records_what_it_cannot_judge_and_does_not_raise(tmp_path: Path):
    directory = _finding_dir(tmp_path, reduced="def (:\n", smallest=HARNESS.format(mark=""), repro="print(1)\n")
    judge = VersionJudge([Torch(str(tmp_path / "no-such-python"), ByProgram(), NEW)])
    record = judge.judge(directory)
    reduced = record.newest.program("reduced")
    assert reduced.verdict == "" and "reduced.py" in reduced.reason and reduced.describe().startswith("not judged")
    assert record.newest.repro_exit is None and record.newest.repro.startswith("could not run")
    assert record.status == "changed" and not record.newest.passes


def test_an_unreduced_finding_without_repro_is_judged_by_its_smallest_program(tmp_path: Path):
    directory = _finding_dir(tmp_path, reduced=None, smallest=HARNESS.format(mark=""), repro=None)
    record = VersionJudge([Torch(sys.executable, ByProgram(), NEW)]).judge(directory)
    assert [p.program for p in record.newest.programs] == ["smallest"] and record.newest.repro == ""
    assert record.status == "fixed_since"


def test_a_judge_needs_a_torch():
    with pytest.raises(ValueError):
        VersionJudge([])
