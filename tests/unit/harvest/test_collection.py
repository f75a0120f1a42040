"""Collection by import: the collector program on torch-free folders (a real subprocess), its
answer read back, and the tests it names made programs from the folder's text."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from mutator.core.observation import Outcome
from mutator.harvest import by_import
from mutator.harvest.collection import (Collected, CollectedClass, CollectedTest, CollectionFailed, ModuleSkipped,
                                        Site, collection_of, collection_program)
from mutator.harvest.extract import Extraction, ExtractionFailed, Harvested, NotHarvested, extract
from mutator.harvest.located import extract_collected

from tests.helpers import run

COPYING = {
    "_helpers": '''
        def copy_members(target, *mixins, skip=()):
            for mixin in mixins:
                for name, value in mixin.__dict__.items():
                    if not name.startswith("__") and name not in skip:
                        setattr(target, name, value)


        def with_values(name, values):
            def mark(test):
                test.values = (name, values)
                return test
            return mark


        def expand(cls):
            for attr, test in list(vars(cls).items()):
                if hasattr(test, "values"):
                    delattr(cls, attr)
                    name, values = test.values
                    for value in values:
                        setattr(cls, f"{attr}_{value}", _bound(test, {name: value}))
            return cls


        def _bound(test, kwargs):
            def run(self, kwargs=kwargs):
                return test(self, **kwargs)
            run.__wrapped__ = test
            return run
    ''',
    "_mixin_a": '''
        from ._helpers import with_values


        class AChecks:
            unit = 2

            def setUp(self):
                raise AssertionError("not copied")

            def doubled(self, x):
                return x * self.unit

            def test_doubles(self):
                assert self.doubled(3) == 6

            @with_values("n", [1, 4])
            def test_powers(self, n):
                assert self.doubled(n) == 2 * n
    ''',
    "_mixin_b": '''
        class BChecks:
            def test_negates(self):
                assert -self.base == -1
    ''',
    "test_main": '''
        import unittest

        try:
            from ._helpers import copy_members, expand
            from ._mixin_a import AChecks
            from ._mixin_b import BChecks
        except ImportError:
            from _helpers import copy_members, expand
            from _mixin_a import AChecks
            from _mixin_b import BChecks


        class PublicTests(unittest.TestCase):
            def setUp(self):
                self.base = 1

            def test_own(self):
                assert self.base == 1

            @unittest.skip("not today")
            def test_skipped(self):
                pass

            @unittest.expectedFailure
            def test_expected_to_fail(self):
                assert False


        copy_members(PublicTests, AChecks, BChecks, skip=("setUp",))
        expand(PublicTests)
    ''',
}


def write(folder: Path, files: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, source in files.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(source).lstrip())


def collect(path: Path) -> dict:
    """What the collector program prints for `path`, run by plain python in a subprocess."""
    program = collection_program(path)
    proc = subprocess.run([sys.executable, "-c", program.source], capture_output=True, text=True, timeout=120,
                          cwd=path.parent.parent)
    line = proc.stdout.strip().splitlines()[-1]
    assert line.startswith(by_import.MARKER), proc.stderr
    return json.loads(line.removeprefix(by_import.MARKER))


def as_result(answer: dict):  # type: ignore[no-untyped-def]
    return run(text="printed by the module\n" + by_import.MARKER + json.dumps(answer) + "\n")


def sources(folder: Path) -> dict[str, str]:
    return {p.stem: p.read_text() for p in folder.glob("*.py")}


def located(folder: Path, collected: Collected, main: str = "test_main") -> dict[str, Extraction]:
    files = sources(folder)
    found = extract_collected(files[main], collected, path=str(folder / f"{main}.py"),
                              siblings=lambda name: files.get(name) if name != main else None)
    return {e.test_id: e for e in found}


def test_the_import_shows_copied_and_parametrised_tests_where_their_code_lives(tmp_path: Path):
    write(tmp_path / "suite", COPYING)
    answer = collect(tmp_path / "suite" / "test_main.py")
    tests = {t["id"]: t for t in answer["tests"]}
    assert sorted(tests) == sorted(f"PublicTests::{name}" for name in (
        "test_doubles", "test_negates", "test_own", "test_powers_1", "test_powers_4", "test_skipped",
        "test_expected_to_fail"))
    powers = tests["PublicTests::test_powers_4"]
    assert powers["params"] == {"n": "4"} and powers["function"]["qualname"] == "AChecks.test_powers"
    assert powers["function"]["file"] == str((tmp_path / "suite" / "_mixin_a.py").resolve())
    assert tests["PublicTests::test_skipped"]["skip"] == "not today"
    assert tests["PublicTests::test_expected_to_fail"]["xfail"] is True
    [public] = answer["classes"]
    assert {(c["name"], c["qualname"]) for c in public["copied"]} == {
        ("doubled", "AChecks"), ("test_doubles", "AChecks"), ("test_powers", "AChecks"), ("test_negates", "BChecks")}
    assert "unit" in public["members"] and answer["module"] == "suite.test_main"  # the folder as a package


def test_copied_members_become_bases_with_only_what_the_test_reaches_and_parameters_go_to_the_runner(tmp_path: Path):
    write(tmp_path / "suite", COPYING)
    found = located(tmp_path / "suite", collection_of(as_result(collect(tmp_path / "suite" / "test_main.py"))))
    program = found["PublicTests::test_powers_4"]
    assert isinstance(program, Harvested), program
    source = program.source
    assert "class PublicTests(AChecks, HarvestedChecks):" in source and "BChecks" not in source
    assert "    unit = 2\n" in source and "def doubled(self, x):" in source  # reached through self
    assert 'raise AssertionError("not copied")' not in source  # the setUp the copy skipped
    assert source.endswith('HarvestedChecks.harvested_run(PublicTests, "test_powers", {"n": 4})\n')
    assert "import copy_members" not in source and "import AChecks" not in source  # the siblings are inlined
    negates = found["PublicTests::test_negates"]
    assert isinstance(negates, Harvested) and "class PublicTests(BChecks, HarvestedChecks):" in negates.source
    assert found["PublicTests::test_skipped"] == NotHarvested("PublicTests::test_skipped", "skipped: not today")
    assert found["PublicTests::test_expected_to_fail"] == NotHarvested("PublicTests::test_expected_to_fail",
                                                                       "expected to fail")
    for extraction in found.values():
        if isinstance(extraction, Harvested):
            compile(extraction.source, extraction.test_id, "exec")
    text_only = {e.test_id for e in extract(sources(tmp_path / "suite")["test_main"],
                                            siblings=lambda n: sources(tmp_path / "suite").get(n))}
    assert "PublicTests::test_powers_4" not in text_only  # what the text alone cannot see


def test_a_module_that_fails_to_import_or_skips_itself_says_so(tmp_path: Path):
    write(tmp_path / "broken", {"test_broken": '''
        import unittest
        from _missing_helpers import nothing


        class T(unittest.TestCase):
            def test_x(self):
                pass
    ''', "test_skips": '''
        import unittest
        raise unittest.SkipTest("needs a GPU")
    '''})
    failed = collection_of(as_result(collect(tmp_path / "broken" / "test_broken.py")))
    assert failed == CollectionFailed("ModuleNotFoundError: No module named '_missing_helpers' (test_broken.py:2)")
    skipped = collection_of(as_result(collect(tmp_path / "broken" / "test_skips.py")))
    assert skipped == ModuleSkipped("needs a GPU")


def test_a_collection_run_that_did_not_answer_is_a_failed_collection():
    crashed = run(outcome=Outcome.SIGNALLED, detail="killed by SIGSEGV")
    assert collection_of(crashed) == CollectionFailed("the collection run signalled: killed by SIGSEGV")
    assert isinstance(collection_of(run(text="no answer here\n")), CollectionFailed)


def test_a_generated_class_stands_for_the_class_its_text_writes_and_a_cuda_instance_is_not_harvested():
    main = '''
        import unittest


        class DeviceChecks(unittest.TestCase):
            def test_on(self, device):
                assert device == "cpu"
    '''
    path = "/suite/test_main.py"

    def test(cls: str, name: str, device: str) -> CollectedTest:
        return CollectedTest(f"{cls}::{name}", cls, name, (Site(path, cls), Site(path, "DeviceChecks")),
                             Site(path, "DeviceChecks.test_on", 5), (("device", repr(device)),), device=device)
    collected = Collected("test_main", (test("DeviceChecksCPU", "test_on_cpu", "cpu"),
                                        test("DeviceChecksCUDA", "test_on_cuda", "cuda")),
                          (CollectedClass(Site(path, "DeviceChecksCPU"), ("test_on_cpu",), ()),))
    found = {e.test_id: e for e in extract_collected(textwrap.dedent(main), collected, path=path,
                                                     siblings=lambda name: None)}
    cpu = found["DeviceChecksCPU::test_on_cpu"]
    assert isinstance(cpu, Harvested) and cpu.source.endswith(
        "HarvestedChecks.harvested_run(DeviceChecks, \"test_on\", {\"device\": 'cpu'})\n")
    assert isinstance(found["DeviceChecksCUDA::test_on_cuda"], NotHarvested)
    assert found["DeviceChecksCUDA::test_on_cuda"].reason.startswith("runs on cuda")


def test_a_test_whose_code_the_text_does_not_have_fails_alone():
    main = '''
        import unittest


        class Made(unittest.TestCase):
            def test_here(self):
                pass
    '''
    path = "/suite/test_main.py"
    collected = Collected("test_main", (
        CollectedTest("Made::test_here", "Made", "test_here", (Site(path, "Made"),), Site(path, "Made.test_here"), ()),
        CollectedTest("Made::test_factory", "Made", "test_factory", (Site(path, "Made"),),
                      Site(path, "factory.<locals>.test", 3), ()),
        CollectedTest("Ghost::test_x", "Ghost", "test_x", (), None, ())), ())
    found = {e.test_id: e for e in extract_collected(textwrap.dedent(main), collected, path=path,
                                                     siblings=lambda name: None)}
    assert isinstance(found["Made::test_here"], Harvested)
    assert isinstance(found["Made::test_factory"], ExtractionFailed)
    assert "is no method of a class the folder's text writes" in found["Made::test_factory"].reason
    assert isinstance(found["Ghost::test_x"], ExtractionFailed)


def test_a_functions_import_of_a_sibling_is_inlined():
    files = {
        "test_main": '''
            import unittest


            class Hooked(unittest.TestCase):
                def setUp(self):
                    try:
                        from .hooks import installed
                    except ImportError:
                        from hooks import installed
                    self.value = installed()

                def test_value(self):
                    import torch
                    fn = torch.compile(lambda t: t + self.value, backend="eager")
                    assert fn(torch.zeros(1)).item() == 7
        ''',
        "hooks": '''
            SEVEN = 7


            def installed():
                return SEVEN
        '''}
    sources = {name: textwrap.dedent(code).lstrip() for name, code in files.items()}
    [program] = extract(sources["test_main"], siblings=lambda name: sources.get(name) if name != "test_main" else None)
    assert isinstance(program, Harvested), program
    assert "def installed():" in program.source and "SEVEN = 7" in program.source
    assert "import installed" not in program.source
    assert "        self.value = installed()\n" in program.source
