"""`mutate harvest` and `mutate minimize` through real workers, on test files of our own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "harvest"
FAILURES = ROOT / "tests" / "fixtures" / "harvest_failures"  # beside FIXTURES: their counts stay as they are
INHERIT = ROOT / "tests" / "fixtures" / "harvest_inherit"
RUN_DECIDES = ROOT / "tests" / "fixtures" / "harvest_run_decides"
IMPORTED = ROOT / "tests" / "fixtures" / "harvest_import"
PASSES_OVER = ROOT / "tests" / "fixtures" / "harvest_passes_over"
DYNAMO_CASE = ROOT / "tests" / "fixtures" / "harvest_dynamo_case"


def mutate(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=1200)


def failing_alone(paths: list[Path], cwd: Path) -> list[tuple[str, int, str]]:
    """Each program run with plain `python`, outside this package, two at a time: those that fail."""
    plain = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def run(path: Path) -> tuple[str, int, str]:
        proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, cwd=cwd, env=plain,
                              timeout=300)
        return path.name, proc.returncode, proc.stderr[-300:]

    with ThreadPoolExecutor(max_workers=2) as executor:
        return [r for r in executor.map(run, paths) if r[1] != 0]


@pytest.fixture(scope="module")
def harvested(tmp_path_factory):
    out = tmp_path_factory.mktemp("harvested")
    bad = tmp_path_factory.mktemp("bad")
    (bad / "latin.py").write_bytes(b"# caf\xe9\nimport torch\n")
    (bad / "broken.py").write_text("def (:\n")
    proc = mutate("harvest", str(FIXTURES), str(bad), "--out", str(out), "--json", "-j", "2")
    return out, proc


def test_every_compiling_test_becomes_one_program(harvested):
    out, proc = harvested
    report = json.loads(proc.stdout)
    written = {json.loads(Path(p).with_suffix(".json").read_text())["origin"].split("/")[-1] for p in report["programs"]}
    tests = {origin.split("[")[0] for origin in written}  # parameter sets whose coverage repeats are duplicates
    assert tests == {
        "test_dynamo_style.py::DynamoStyleTests::" + name for name in (
            "test_helper_function", "test_module_class", "test_through_a_method_helper", "test_counts_ops",
            "test_raises_like_eager", "test_expects_a_graph_break_error", "test_parametrised",
            "test_class_attribute_and_counter")
    } | {"test_pytest_style.py::" + name for name in ("test_softplus_matches", "test_pairs", "test_bad_view_raises")} \
        | {"repro_passing.py"}, report
    assert len(written) + report["duplicates"] == report["candidates"] - report["skipped"] \
        - len(report["already_failing"]) - report["not_harvested"]["compiles nothing"]  # decided by running them
    assert report["invalid"] == {} and report["unstable"] == 0
    assert sorted(p.name for p in out.glob("*.py")) == sorted(Path(p).name for p in report["programs"])
    assert all(json.loads(p.with_suffix(".json").read_text())["features"] for p in out.glob("*.py"))
    first = (out / "repro_passing.py").read_text().splitlines()
    assert first[0].startswith("# Harvested by mutator from ") and first[0].endswith("repro_passing.py")
    assert "with torch 2." in first[1]


def test_what_is_not_written_is_counted(harvested):
    _, proc = harvested
    report = json.loads(proc.stdout)
    assert report["not_harvested"] == {"skipped": 2, "expected to fail": 1, "compiles nothing": 2,
                                       "takes arguments no parameter set gives (a pytest fixture)": 1,
                                       "branches on is_compiling()": 1}
    assert report["skipped"] == 1  # the skipIf decided when it ran
    assert report["tests_found"] == 24 and report["test_files"] == 2 and report["scripts"] == 2
    assert len(report["not_programs"]) == 1 and "notes.py" in report["not_programs"][0]


def test_tests_that_already_fail_are_filed(harvested):
    out, proc = harvested
    failing = {Path(f["origin"]).name.split("::")[-1] if "::" in f["origin"] else Path(f["origin"]).name: f["verdict"]
               for f in json.loads(proc.stdout)["already_failing"]}
    assert failing == {"test_fails_only_compiled": "MISMATCH", "repro_format_spec.py": "MISMATCH"}
    [finding] = [json.loads(p.read_text()) for p in (out / "findings").glob("*/finding.json")]  # one signature,
    assert finding["hits"] == 2 and len(finding["variants"]) == 2  # and each failing program kept as a variant


def test_unreadable_files_get_one_line_each_and_the_rest_still_runs(harvested):
    _, proc = harvested
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 2 and any("latin.py: not UTF-8" in e for e in errors) and \
        any("broken.py:1: does not parse" in e for e in errors)
    assert proc.returncode == 2


def test_a_test_or_a_file_that_cannot_be_processed_is_listed_and_the_rest_is_harvested(tmp_path):
    proc = mutate("harvest", str(FAILURES), "--out", str(tmp_path / "out"), "--json", "-j", "2")
    report = json.loads(proc.stdout)  # the summary, though one file and one test failed
    written = {json.loads(Path(p).with_suffix(".json").read_text())["origin"].split("::", 1)[1]
               for p in report["programs"]}
    assert written == {"MixedFormTests::test_scale_and_shift", "MixedFormTests::test_breaks_on_item",
                       "test_stacks_a_list_of_tensors"}, report
    [failure] = report["failures"]
    assert failure["origin"] == f"{FAILURES / 'test_mixed_forms.py'}::MixedFormTests::test_through_the_compiler_namespace"
    assert failure["reason"].startswith("not a program: defines neither fn with inputs() (harness form) nor a "
                                        "torch.compile call")
    assert report["failed"] == {"not a program": 1}
    [error] = report["errors"]
    assert error.startswith(f"{FAILURES / 'test_too_deep.py'}: cannot be taken apart (RecursionError")
    assert [line for line in proc.stderr.splitlines() if line.startswith("error:")] == [
        f"error: {error}", f"error: {failure['origin']}: {failure['reason']}"]
    assert report["files"] == 2 and report["tests_found"] == 4 and report["candidates"] == 3
    assert proc.returncode == 2


def test_harvested_programs_run_with_plain_python(harvested, tmp_path):
    out, _ = harvested

    assert failing_alone(sorted(out.glob("*.py")), tmp_path) == []


def test_harvesting_again_writes_nothing_new(harvested, tmp_path):
    out, _ = harvested
    proc = mutate("harvest", str(FIXTURES / "reproducers"), "--out", str(out), "--json")
    report = json.loads(proc.stdout)
    assert report["written"] == 0 and report["duplicates"] == 1


def test_minimize_keeps_every_feature_with_fewer_programs(harvested, tmp_path):
    out, _ = harvested
    small = tmp_path / "small"
    summary = json.loads(mutate("minimize", str(out), "--out", str(small), "--json").stdout)
    assert summary["programs_before"] == len(list(out.glob("*.py"))) and summary["ran"] == 0  # from the sidecars
    assert summary["features_after"] == summary["features_before"] > 0
    assert 0 < summary["programs_after"] < summary["programs_before"]
    assert len(list(small.glob("*.py"))) == summary["programs_after"]
    assert mutate("minimize", str(out), "--out", str(small)).returncode == 2  # never into a non-empty directory


def test_minimize_runs_programs_without_stored_features_through_the_pool(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    for name in ("repro_passing.py", "repro_format_spec.py"):
        (plain / name).write_text((FIXTURES / "reproducers" / name).read_text())
    summary = json.loads(mutate("minimize", str(plain), "--out", str(tmp_path / "small"), "--json", "-j", "2").stdout)
    assert summary["ran"] == 2 and summary["programs_before"] == 2 and summary["features_before"] > 0
    assert summary["features_after"] == summary["features_before"]


def test_inherited_and_mixed_in_tests_are_harvested_once_per_concrete_class_and_run_alone(tmp_path):
    out = tmp_path / "out"
    proc = mutate("harvest", str(INHERIT), "--out", str(out), "--json", "-j", "2")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    kept = {json.loads(Path(p).with_suffix(".json").read_text())["origin"].split("/")[-1] for p in report["programs"]}
    subclass_tests = {f"test_set_types.py::{cls}::{test}" for cls in ("PlainSetTests", "SubclassedSetTests",
                                                                       "FrozenSetTests")
                      for test in ("test_membership_in_compiled_code", "test_union_size")}
    mixed_in = {f"test_mixed_in.py::MixedInTests::{test}" for test in (
        "test_clipped_sum", "test_own_offset", "test_rotates_by_pi", "test_shift_then_scale")}
    assert report["tests_found"] == report["candidates"] == 12  # the base's two as well: pytest runs them
    assert report["skipped"] == 2  # ... and they skip themselves when run
    assert report["invalid"] == {} and report["already_failing"] == [] and report["failures"] == []
    assert kept == mixed_in | subclass_tests, report  # set, a subclass and frozenset: three paths through Dynamo,
    assert report["duplicates"] == 0  # so no subclass's program repeats another's coverage
    assert [Path(p.split(":")[0]).name for p in report["not_programs"]] == ["_mixin_a.py", "_mixin_b.py"]
    assert failing_alone(sorted(out.glob("*.py")), tmp_path) == []


def test_a_test_compiling_through_a_helper_its_text_does_not_name_is_harvested_because_it_compiles(tmp_path):
    """The folder's own decorator compiles through torch._dynamo.eval_frame, which no reading
    recognises: running the test decides. Its neighbour compiles nothing when run."""
    proc = mutate("harvest", str(RUN_DECIDES), "--out", str(tmp_path / "out"), "--json", "-j", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["not_harvested"] == {"compiles nothing": 1} and report["failed"] == {}, report
    [written] = [Path(p) for p in report["programs"]]
    assert written.name == "test_through_helper__Shapes__test_scaled_shape.py"
    assert written.read_text().splitlines()[2].startswith("# mutator-form: script")
    assert json.loads(written.with_suffix(".json").read_text())["features"]
    assert failing_alone([written], tmp_path) == []


def pytest_collects(folder: Path, *files: str) -> set[str]:
    """What `pytest --collect-only -q` lists of `files` (run in `folder`, with no configuration of ours)."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-c",
                           os.devnull, *files], capture_output=True, text=True, cwd=folder, timeout=600)
    return {line for line in proc.stdout.splitlines() if "::" in line}


def test_tests_a_module_makes_at_import_time_are_collected_as_pytest_collects_them_and_harvested(tmp_path):
    """Members copied from two mixin modules by a setattr loop, parametrised by the folder's own
    decorator and by torch's instantiate_parametrized_tests; a module that fails to import is
    listed, and its tests read from its text."""
    out = tmp_path / "out"
    proc = mutate("harvest", str(IMPORTED), "--out", str(out), "--json", "-j", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["imported"] == 2 and report["failures"] == [] and report["invalid"] == {}, report
    [failed] = report["collection_errors"]
    assert failed == {"file": str(IMPORTED / "test_import_fails.py"),
                      "error": "ImportError: this test module needs a_module_nobody_installed (test_import_fails.py:11)"}
    assert f"warning: {IMPORTED / 'test_import_fails.py'}: cannot be imported" in proc.stderr
    checked = {Path(c["origin"].split("::", 1)[0]).name + "::" + c["origin"].split("::", 1)[1]: c
               for c in report["checked"]}
    importable = ("test_copied_members.py", "test_torch_parametrize.py")
    assert {t for t in checked if t.startswith(importable)} == pytest_collects(IMPORTED, *importable)
    assert len(checked) == 12 and "test_import_fails.py::NeedsAModule::test_doubles" in checked
    assert {c["verdict"] for c in checked.values()} == {"PASS"}
    programs = {json.loads(Path(p).with_suffix(".json").read_text())["origin"].split("::", 1)[1]: Path(p).read_text()
                for p in report["programs"]}
    sizes = programs["CopiedTests::test_scale_sizes_size_2"]
    assert "class CopiedTests(ScalingChecks, HarvestedChecks):" in sizes and "    factor = 3.0\n" in sizes
    assert sizes.endswith('HarvestedChecks.harvested_run(CopiedTests, "test_scale_sizes", {"size": 2})\n')
    assert programs["PowerTests::test_power_exponent_2"].endswith(
        'HarvestedChecks.harvested_run(PowerTests, "test_power", {"exponent": 2})\n')
    assert failing_alone(sorted(out.glob("*.py")), tmp_path) == []


def test_a_divergence_the_tests_own_checks_pass_over_is_filed_and_listed_apart(tmp_path):
    """An OrderedDict subclass's copy() gives back a plain dict compiled (torch 2.15), and the
    keys of an object's __dict__ come in another order: assertEqual passes both, as pytest does."""
    proc = mutate("harvest", str(PASSES_OVER), "--out", str(tmp_path / "out"), "--json", "-j", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["already_failing"] == [] and report["imported"] == 1
    missed = {entry["origin"].split("::")[-1]: entry for entry in report["divergences_the_test_misses"]}
    assert {name: (entry["verdict"], entry["comparison"]) for name, entry in missed.items()} == {
        "test_copy_of_an_ordered_dict_subclass": ("MISMATCH", "type of a compiled call's result"),
        "test_attributes_after_setting_one": ("MISMATCH", "order of keys of a compiled call's result")}
    assert missed["test_copy_of_an_ordered_dict_subclass"]["detail"] == "eager Ranked, compiled dict"
    assert all((tmp_path / "out" / entry["finding"] / "finding.json").exists() for entry in missed.values())


def test_a_test_of_dynamos_testcase_runs_under_the_configuration_its_class_gives_it(tmp_path):
    """Torch's Dynamo TestCase patches torch._dynamo.config in its setUpClass
    (canonicalize_output_graph_node_order=True, on which the fixture's test depends) and its
    setUp: the harvested program runs that set-up, judged and with plain python alike."""
    out = tmp_path / "out"
    proc = mutate("harvest", str(DYNAMO_CASE), "--out", str(out), "--json", "-j", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert [(c["origin"].split("::", 1)[1], c["verdict"], c["outcome"]) for c in report["checked"]] == [
        ("GraphOrderTests::test_dict_order_gives_one_graph", "PASS", "written")], report  # was a false MISMATCH
    [program] = [Path(p) for p in report["programs"]]
    source = program.read_text()
    assert "class GraphOrderTests(HarvestedDynamoChecks):" in source
    assert failing_alone([program], tmp_path) == []
    without = tmp_path / "without_its_set_up.py"  # the same program under Dynamo's defaults fails
    without.write_text(source.replace("class GraphOrderTests(HarvestedDynamoChecks):",
                                      "class GraphOrderTests(HarvestedChecks):"))
    [(_, code, stderr)] = failing_alone([without], tmp_path)
    assert code == 1 and "AssertionError" in stderr


def test_a_test_folder_that_is_a_package_is_imported_as_its_package_as_pytest_does(tmp_path):
    """`suite/__init__.py` makes the folder a package: pytest imports `suite.test_scaled` with
    the folder above on sys.path, which the sandbox does not let a run list; the package is
    imported from its own `__init__.py` instead, and the tests are collected, not read from text."""
    suite = tmp_path / "tests" / "suite"
    suite.mkdir(parents=True)
    (suite / "__init__.py").write_text("import unittest\n\nunittest.TestCase.longMessage = True\n")
    (suite / "scales.py").write_text("SCALE = 3.0\n")
    (suite / "test_scaled.py").write_text(
        "import unittest\n\nimport torch\n\nfrom .scales import SCALE\n\n\n"
        "class ScaledTests(unittest.TestCase):\n"
        "    def test_scale(self):\n"
        "        fn = torch.compile(lambda x: x * SCALE, backend='eager')\n"
        "        self.assertEqual(fn(torch.ones(2)).sum().item(), 6.0)\n")
    proc = mutate("harvest", str(suite), "--out", str(tmp_path / "out"), "--json", "-j", "1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["imported"] == 1 and report["collection_errors"] == [], report
    assert "cannot be imported" not in proc.stderr
    assert [(c["origin"], c["verdict"]) for c in report["checked"]] == [
        (f"{suite / 'test_scaled.py'}::ScaledTests::test_scale", "PASS")]
    assert {t.split("::", 1)[1] for t in pytest_collects(suite.parent, "suite/test_scaled.py")} == {
        "ScaledTests::test_scale"}
