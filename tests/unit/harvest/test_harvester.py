"""Harvest never aborts: what goes wrong with one file or one test is counted, listed, and
the rest of the run goes on (fake checks, no workers)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from mutator.core import storage
from mutator.judge.check import CheckResult
from mutator.harvest import extract as extract_module
from mutator.harvest.harvester import HarvestReport
from mutator.judge.oracle import Judgement
from mutator.exec.pool import PoolError
from mutator.core.program import Program
from mutator.core.verdict import Verdict

from tests.helpers import compiled_run, run
from tests.unit.harvest.helpers import harvester, passing


FAILURES = Path(__file__).resolve().parents[2] / "fixtures" / "harvest_failures"
GOOD = '''\
import torch


def test_doubles():
    fn = torch.compile(lambda t: t * 2, backend="eager")
    assert fn(torch.ones(1)).item() == 2.0


def test_negates():
    fn = torch.compile(lambda t: -t, backend="eager")
    assert fn(torch.ones(1)).item() == -1.0
'''


def origins(entries: list[dict[str, str]]) -> list[str]:
    return [entry["origin"].split("/")[-1] for entry in entries]


def written_tests(out: Path, report: HarvestReport) -> set[str]:
    return {json.loads(Path(p).with_suffix(".json").read_text())["origin"].split("::", 1)[-1]
            for p in report.written}


def test_a_test_whose_program_is_neither_form_is_listed_and_the_others_are_harvested(tmp_path: Path):
    # today's abort: Program.from_source raised ProgramError out of the run for this test
    report = harvester(tmp_path / "out").harvest([FAILURES / "test_mixed_forms.py"])
    assert written_tests(tmp_path / "out", report) == {
        "MixedFormTests::test_scale_and_shift", "MixedFormTests::test_breaks_on_item", "test_stacks_a_list_of_tensors"}
    assert origins(report.failures) == ["test_mixed_forms.py::MixedFormTests::test_through_the_compiler_namespace"]
    [failure] = report.failures
    assert failure["reason"].startswith("not a program: defines neither fn with inputs() (harness form) nor a "
                                        "torch.compile call")
    assert report.failed == {"not a program": 1}
    assert report.tests_found == 4 and report.candidates == 3 and report.errors == []
    assert report.as_json()["failures"] == report.failures and report.as_json()["failed"] == {"not a program": 1}


def test_a_file_extraction_cannot_take_apart_is_listed_and_the_other_files_are_harvested(tmp_path: Path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "test_good.py").write_text(GOOD)
    report = harvester(tmp_path / "out").harvest([FAILURES / "test_too_deep.py", tmp_path / "in"])
    [error] = report.errors
    assert error.startswith(f"{FAILURES / 'test_too_deep.py'}: cannot be taken apart (RecursionError: ")
    assert written_tests(tmp_path / "out", report) == {"test_doubles", "test_negates"}
    assert report.files == 2 and report.test_files == 2 and report.failures == []


def test_a_bug_of_ours_in_one_test_costs_that_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    function = extract_module.Extractor._function

    def broken_for_negates(self, test):  # type: ignore[no-untyped-def]
        if test.name.value == "test_negates":
            raise KeyError("a shape extraction never met")
        return function(self, test)

    monkeypatch.setattr(extract_module.Extractor, "_function", broken_for_negates)
    (tmp_path / "test_good.py").write_text(GOOD)
    report = harvester(tmp_path / "out").harvest([tmp_path / "test_good.py"])
    assert written_tests(tmp_path / "out", report) == {"test_doubles"}
    assert report.failures == [dict(origin=f"{tmp_path / 'test_good.py'}::test_negates",
                                    reason="extraction failed: KeyError: 'a shape extraction never met'")]
    assert report.failed == {"extraction failed": 1} and report.tests_found == 2


def test_a_file_nested_too_deeply_to_parse_is_an_error_of_its_own(tmp_path: Path):
    (tmp_path / "test_deeper.py").write_text("x = (" + " + ".join(["1"] * 5000) + ")\n")
    (tmp_path / "test_good.py").write_text(GOOD)
    report = harvester(tmp_path / "out").harvest([tmp_path])
    assert report.errors == [f"{tmp_path / 'test_deeper.py'}: nested too deeply to parse; split the expression"]
    assert len(report.written) == 2


def test_a_check_that_raises_costs_that_program(tmp_path: Path):
    def dies_on_negates(program: Program) -> CheckResult:
        if "lambda t: -t" in program.source:
            raise PoolError("a worker failed to start (exit status 1)")
        return passing(program)

    (tmp_path / "test_good.py").write_text(GOOD)
    report = harvester(tmp_path / "out", dies_on_negates).harvest([tmp_path / "test_good.py"])
    assert written_tests(tmp_path / "out", report) == {"test_doubles"}
    assert origins(report.failures) == ["test_good.py::test_negates"]
    assert report.failures[0]["reason"] == "check failed: PoolError: a worker failed to start (exit status 1)"


def test_a_bug_of_ours_in_checking_one_program_costs_that_program(tmp_path: Path):
    def oracle_bug(program: Program) -> CheckResult:
        if "lambda t: -t" in program.source:
            raise AttributeError("'NoneType' object has no attribute 'calls'")
        return passing(program)

    (tmp_path / "test_good.py").write_text(GOOD)
    report = harvester(tmp_path / "out", oracle_bug).harvest([tmp_path / "test_good.py"])
    assert written_tests(tmp_path / "out", report) == {"test_doubles"}
    assert report.failures[0]["reason"].startswith("check failed: AttributeError")


def test_a_program_that_cannot_be_written_costs_that_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    write_text = storage.write_text

    def full_for_negates(path: Path, text: str) -> None:
        if "lambda t: -t" in text:
            raise OSError(28, "No space left on device")
        write_text(path, text)

    monkeypatch.setattr(storage, "write_text", full_for_negates)
    (tmp_path / "test_good.py").write_text(GOOD)
    report = harvester(tmp_path / "out").harvest([tmp_path / "test_good.py"])
    assert written_tests(tmp_path / "out", report) == {"test_doubles"}
    assert origins(report.failures) == ["test_good.py::test_negates"]
    assert report.failures[0]["reason"].startswith("not written: ") and "No space left" in report.failures[0]["reason"]
    assert not list((tmp_path / "out").glob("*negates*"))



def test_every_test_considered_is_listed_by_origin_with_what_came_of_it(tmp_path: Path):
    def negates_fails_eagerly(program: Program) -> CheckResult:
        if "lambda t: -t" in program.source:
            return CheckResult(program, Judgement(Verdict.INVALID, "eager raised ValueError"), (run(), compiled_run()))
        return passing(program)

    (tmp_path / "test_good.py").write_text(GOOD + textwrap.dedent('''

        @pytest.mark.skip(reason="not here")
        def test_skipped():
            torch.compile(lambda t: t, backend="eager")(torch.ones(1))
    ''').replace("import torch\n", "import pytest\nimport torch\n", 1))
    report = harvester(tmp_path / "out", negates_fails_eagerly).harvest([tmp_path / "test_good.py"])
    outcomes = {entry["origin"].split("::")[-1]: (entry["verdict"], entry["outcome"]) for entry in report.checked}
    assert outcomes == {"test_doubles": ("PASS", "written"), "test_negates": ("INVALID", "invalid")}
    assert [(entry["origin"].split("::")[-1], entry["reason"].split(":")[0])
            for entry in report.not_harvested_tests] == [("test_skipped", "skipped")]
    assert report.as_json()["checked"] == report.checked and len(report.written) == 1

    again = harvester(tmp_path / "out").harvest([tmp_path / "test_good.py"])
    assert {entry["origin"].split("::")[-1]: entry["outcome"] for entry in again.checked} == \
        {"test_doubles": "duplicate", "test_negates": "written"}
