"""Every test pytest would collect: inherited tests once per concrete class, mixins read from
the modules beside the test file, each program standalone."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from mutator.findings.store import FindingStore
from mutator.harvest.classes import Hierarchy
from mutator.harvest.extract import Extraction, ExtractionFailed, Harvested, NotHarvested, extract, is_test_file
from mutator.harvest.harvester import Harvester
from mutator.harvest.modules import folder_reader
from mutator.core.program import Program, ProgramForm

from tests.unit.harvest.helpers import passing

INHERIT = Path(__file__).resolve().parents[2] / "fixtures" / "harvest_inherit"
SET_TESTS = ("test_membership_in_compiled_code", "test_union_size")


def harvest_file(path: Path) -> dict[str, Extraction]:
    return {e.test_id: e for e in extract(path.read_text(), siblings=folder_reader(path))}


def harvest_folder(files: dict[str, str], main: str = "test_main") -> dict[str, Extraction]:
    """The extractions of `main` among `files` (module name -> source), read from memory."""
    sources = {name: textwrap.dedent(source).lstrip() for name, source in files.items()}
    return {e.test_id: e for e in extract(sources[main], siblings=lambda name: sources.get(name) if name != main
                                          else None)}


def source_of(found: dict[str, Extraction], test_id: str) -> str:
    extraction = found[test_id]
    assert isinstance(extraction, Harvested), extraction
    compile(extraction.source, test_id, "exec")
    assert Program.from_source(extraction.source, "h.py").form is ProgramForm.SCRIPT
    return extraction.source


def class_body(program: str, name: str) -> str:
    """The source of one class of a program, up to the next top-level statement."""
    match = re.search(rf"^class {name}\b.*?(?=^\S)", program, re.S | re.M)
    assert match, f"no class {name} in:\n{program}"
    return match.group(0)


def run_standalone(program: str, tmp_path: Path, name: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / name).write_text(program)
    return subprocess.run([sys.executable, name], capture_output=True, text=True, cwd=tmp_path, timeout=300)


# -- inherited tests: a base holding the tests, subclasses setting thetype ----------------------
def test_each_concrete_subclass_yields_every_test_of_its_base():
    found = harvest_file(INHERIT / "test_set_types.py")
    classes = ("SetTypeTests", "PlainSetTests", "SubclassedSetTests", "FrozenSetTests")
    assert list(found) == [f"{cls}::{test}" for cls in classes for test in SET_TESTS]
    thetypes = {"PlainSetTests": "set", "SubclassedSetTests": "TrackedSet", "FrozenSetTests": "frozenset"}
    for cls, thetype in thetypes.items():
        for test in SET_TESTS:
            program = source_of(found, f"{cls}::{test}")
            assert f"class {cls}(SetTypeTests):\n    thetype = {thetype}\n" in program
            assert program.endswith(f'HarvestedChecks.harvested_run({cls}, "{test}", {{}})\n')
            base = class_body(program, "SetTypeTests")
            assert base.startswith("class SetTypeTests(HarvestedChecks):\n    def setUp(self):")
            assert "thetype = None" not in base and f"def {test}(self):" in base
            assert {t for t in SET_TESTS if f"def {t}(" in program} == {test}  # never the other test
    assert "class TrackedSet(set):" in source_of(found, "SubclassedSetTests::test_union_size")
    assert "class TrackedSet" not in source_of(found, "FrozenSetTests::test_union_size")


def test_the_collected_base_gets_programs_of_its_own_and_an_override_wins():
    found = harvest_file(INHERIT / "test_set_types.py")
    base = source_of(found, "SetTypeTests::test_union_size")
    assert "    thetype = None\n" in class_body(base, "SetTypeTests") and "class PlainSetTests" not in base
    override = source_of(found, "SubclassedSetTests::test_membership_in_compiled_code")
    sub = class_body(override, "SubclassedSetTests")
    assert "super().test_membership_in_compiled_code()" in sub and '"tracked"' in sub
    assert "def test_membership_in_compiled_code(self):" in class_body(override, "SetTypeTests")  # super() reaches it
    plain = source_of(found, "PlainSetTests::test_membership_in_compiled_code")
    assert '"tracked"' not in plain and "def members_of(t):" in plain and "EXPECTED_SIZE = 3" in plain


def test_overrides_hide_and_mixins_are_collected_only_through_their_subclasses():
    found = harvest_folder({"test_main": """
        import unittest
        import torch


        class ChecksMixin:
            def test_doubles(self):
                self.assertEqual(torch.compile(lambda t: t * 2)(torch.ones(1)), torch.ones(1) * 2)

            def test_negates(self):
                self.assertEqual(torch.compile(lambda t: -t)(torch.ones(1)), -torch.ones(1))


        class Everything(ChecksMixin, unittest.TestCase):
            pass


        class NotNegating(ChecksMixin, unittest.TestCase):
            test_negates = None


        class TestPlainStyle(ChecksMixin):
            pass


        class TestHidden(ChecksMixin):
            __test__ = False


        class TestConstructed(ChecksMixin):
            def __init__(self):
                self.ready = True


        class HelperWithTests:
            def test_never(self):
                torch.compile(abs)(torch.ones(1))
    """})
    assert list(found) == ["Everything::test_doubles", "Everything::test_negates", "NotNegating::test_doubles",
                           "TestPlainStyle::test_doubles", "TestPlainStyle::test_negates"]
    plain = source_of(found, "TestPlainStyle::test_negates")
    assert "class TestPlainStyle(ChecksMixin, HarvestedChecks):\n    pass\n" in plain
    assert "class ChecksMixin:\n    def test_negates(self):" in plain


def test_abstract_and_deleted_classes_are_not_collected_their_concrete_subclasses_are():
    found = harvest_folder({"test_main": """
        import abc
        import unittest
        import torch


        class AbstractChecks(abc.ABC, unittest.TestCase):
            @abc.abstractmethod
            def make(self):
                ...

            def test_made(self):
                torch.compile(lambda t: t + 1)(self.make())


        class Concrete(AbstractChecks):
            def make(self):
                return torch.ones(2)


        class Hidden(unittest.TestCase):
            def test_hidden(self):
                torch.compile(abs)(torch.ones(1))


        class StillThere(Hidden):
            pass


        del Hidden
    """})
    assert list(found) == ["Concrete::test_made", "StillThere::test_hidden"]
    program = source_of(found, "Concrete::test_made")
    assert "class AbstractChecks(abc.ABC, HarvestedChecks):" in program and "import abc" in program
    assert "def make(self):\n        return torch.ones(2)" in class_body(program, "Concrete")
    assert "del Hidden" not in source_of(found, "StillThere::test_hidden")


def test_inherited_parametrised_and_device_tests_take_the_same_path_as_a_class_own():
    found = harvest_folder({"test_main": """
        import torch
        from torch.testing._internal.common_utils import TestCase, instantiate_parametrized_tests, parametrize


        @instantiate_parametrized_tests
        class Base(TestCase):
            @parametrize("n", [1, 3])
            def test_sizes(self, n, device):
                torch.compile(lambda t: t.sum())(torch.ones(n, device=device))


        class Derived(Base):
            scale = 2


        instantiate_parametrized_tests(Derived)
    """})
    assert list(found) == ["Base::test_sizes[n=1]", "Base::test_sizes[n=3]",
                           "Derived::test_sizes[n=1]", "Derived::test_sizes[n=3]"]
    program = source_of(found, "Derived::test_sizes[n=3]")
    assert program.endswith('HarvestedChecks.harvested_run(Derived, "test_sizes", {"n": 3, "device": "cpu"})\n')
    assert "@parametrize" not in program and "instantiate_parametrized_tests(Derived)" not in program
    assert "class Derived(Base):\n    pass\n" in program  # scale is never read


def test_a_parametrised_mixin_test_beside_the_file_expands_with_its_modules_values():
    found = harvest_folder({
        "test_main": """
            import torch
            from torch.testing._internal.common_utils import TestCase
            from ._typed import TypedChecks


            class T(TypedChecks, TestCase):
                pass
        """,
        "_typed": """
            import torch
            from torch.testing._internal.common_utils import parametrize

            SIZES = [2, 5]
            MARK = object()


            class TypedChecks:
                @parametrize("n", SIZES)
                @parametrize("dtype", [torch.float32, torch.float64])
                def test_cast(self, n, dtype):
                    torch.compile(lambda t: t.to(dtype))(torch.ones(n))

                @parametrize("marker", [MARK])
                def test_marked(self, marker):
                    torch.compile(lambda t: t)(torch.ones(1))
        """})
    assert list(found) == ["T::test_cast[n=2,dtype=torch.float32]", "T::test_cast[n=2,dtype=torch.float64]",
                           "T::test_cast[n=5,dtype=torch.float32]", "T::test_cast[n=5,dtype=torch.float64]",
                           "T::test_marked"]
    assert source_of(found, "T::test_cast[n=5,dtype=torch.float64]").endswith(
        'HarvestedChecks.harvested_run(T, "test_cast", {"n": 5, "dtype": torch.float64})\n')
    marked = found["T::test_marked"]  # MARK is _typed's, which the runner cannot name: the test fails
    assert isinstance(marked, ExtractionFailed) and marked.reason == (
        "extraction failed: cannot stand alone: its parameter values name MARK of _typed.py, which the test file "
        "does not")


# -- mixins from the modules beside the test file ---------------------------------------------
def test_mixins_from_two_sibling_modules_bring_their_module_context():
    found = harvest_file(INHERIT / "test_mixed_in.py")
    assert list(found) == ["MixedInTests::test_clipped_sum", "MixedInTests::test_own_offset",
                           "MixedInTests::test_rotates_by_pi", "MixedInTests::test_shift_then_scale"]
    shift = source_of(found, "MixedInTests::test_shift_then_scale")
    assert "from ." not in shift and "_mixin_a" not in shift.replace("OFFSET_mixin_a", "")
    assert "OFFSET = 100.0" in shift and "OFFSET_mixin_a = 2.0" in shift  # the test file keeps its name
    assert "def shifted(t):\n    return t + OFFSET_mixin_a\n" in shift
    assert "class ArithmeticChecks:\n    scale = 3.0\n" in shift
    assert "class MixedInTests(ArithmeticChecks, ReductionChecks, HarvestedChecks):" in shift
    assert "self.base = torch.full((2,), OFFSET)" in shift  # the test file's set-up, its own OFFSET
    clipped = source_of(found, "MixedInTests::test_clipped_sum")
    assert "OFFSET_mixin_b = -1.0" in clipped and "LIMIT = 4" in clipped and "OFFSET_mixin_a" not in clipped
    assert "return t.clamp(max=LIMIT).sum() + OFFSET_mixin_b" in clipped
    rotates = source_of(found, "MixedInTests::test_rotates_by_pi")
    assert "import math" in rotates and "def shifted" not in rotates


def test_programs_with_inherited_and_mixed_in_tests_run_standalone(tmp_path: Path):
    programs = {
        "frozen.py": source_of(harvest_file(INHERIT / "test_set_types.py"), "FrozenSetTests::test_union_size"),
        "shift.py": source_of(harvest_file(INHERIT / "test_mixed_in.py"), "MixedInTests::test_shift_then_scale"),
    }
    for name, program in programs.items():
        proc = run_standalone(program, tmp_path, name)
        assert proc.returncode == 0, (name, proc.stderr[-2000:])
    # the renaming is what makes it pass: the test file's OFFSET in the mixin's helper fails it
    unrenamed = programs["shift.py"].replace("return t + OFFSET_mixin_a", "return t + OFFSET")
    proc = run_standalone(unrenamed, tmp_path, "unrenamed.py")
    assert proc.returncode != 0 and "AssertionError" in proc.stderr


def test_absolute_sibling_imports_module_attribute_bases_and_aliases():
    found = harvest_folder({
        "test_main": """
            import unittest
            import helpers_mod
            from helpers_mod import Doubling as Twice


            class T(Twice, helpers_mod.Halving, unittest.TestCase):
                def test_own(self):
                    self.assertEqual(helpers_mod.compiled(lambda t: t)(helpers_mod.ONE), helpers_mod.ONE)
        """,
        "helpers_mod": """
            import torch

            ONE = torch.ones(2)


            def compiled(fn):
                return torch.compile(fn, backend="eager")


            class Doubling:
                def test_doubles(self):
                    self.assertEqual(compiled(lambda t: t * 2)(ONE), ONE * 2)


            class Halving:
                def test_halves(self):
                    self.assertEqual(compiled(lambda t: t / 2)(ONE), ONE / 2)
        """})
    assert sorted(found) == ["T::test_doubles", "T::test_halves", "T::test_own"]
    own = source_of(found, "T::test_own")
    assert "class T(Doubling, Halving, HarvestedChecks):" in own
    assert "self.assertEqual(compiled(lambda t: t)(ONE), ONE)" in own and "helpers_mod" not in own
    assert "def compiled(fn):" in own and "ONE = torch.ones(2)" in own and "import torch" in own


def test_a_name_clash_renames_the_siblings_definition_where_it_is_bound_and_used_only():
    found = harvest_folder({
        "test_main": """
            import torch
            from torch.testing._internal.common_utils import TestCase
            from ._checks import Checks

            SCALE = 10


            def helper(x):
                return x * SCALE


            class T(Checks, TestCase):
                def setUp(self):
                    self.factor = helper(1)
        """,
        "_checks": """
            import torch
            from math import pi as SCALE


            def helper(x, helper=None):
                return torch.compile(lambda t: t * SCALE)(x) if helper is None else helper


            class Checks:
                def test_scaled(self):
                    self.assertEqual(helper(torch.ones(1)) * self.factor, torch.ones(1) * SCALE * 10)
        """})
    program = source_of(found, "T::test_scaled")
    assert program.startswith("import torch\nfrom math import pi as SCALE_checks\nimport math\nimport unittest\n")
    assert textwrap.dedent('''
        def helper_checks(x, helper=None):
            return torch.compile(lambda t: t * SCALE_checks)(x) if helper is None else helper


        class Checks:
            def test_scaled(self):
                self.assertEqual(helper_checks(torch.ones(1)) * self.factor, torch.ones(1) * SCALE_checks * 10)


        SCALE = 10


        def helper(x):
            return x * SCALE


        class T(Checks, HarvestedChecks):
            def setUp(self):
                self.factor = helper(1)
    ''') in program


def test_an_imported_testcase_is_collected_where_it_is_imported_and_in_its_subclasses():
    files = {
        "test_main": """
            from _base import SharedTests


            class MoreTests(SharedTests):
                value = 5
        """,
        "_base": """
            import unittest
            import torch


            class SharedTests(unittest.TestCase):
                value = 1

                def test_value(self):
                    self.assertEqual(torch.compile(lambda t: t + self.value)(torch.zeros(1)).item(), self.value)
        """}
    assert is_test_file(textwrap.dedent(files["test_main"]), siblings=lambda name: textwrap.dedent(files[name])
                        if name in files else None)
    assert not is_test_file(textwrap.dedent(files["test_main"]))  # without its folder, nothing says it is
    found = harvest_folder(files)
    assert list(found) == ["SharedTests::test_value", "MoreTests::test_value"]
    assert "    value = 5\n" in source_of(found, "MoreTests::test_value")
    assert "value = 5" not in source_of(found, "SharedTests::test_value")


# -- what cannot be followed costs the test (or class), never the file ---------------------------
def test_what_cannot_be_followed_is_an_extraction_failure_of_that_test_or_class_only():
    found = harvest_folder({
        "test_main": """
            import unittest
            import torch
            from ..common import FarBase
            from . import _mod
            from ._broken import BrokenMixin
            from ._gone import GoneMixin


            class A(unittest.TestCase):
                pass


            class B(A):
                pass


            class Diamond(A, B):
                pass


            class Far(FarBase, unittest.TestCase):
                def test_far(self):
                    torch.compile(abs)(torch.ones(1))


            class Broken(BrokenMixin, unittest.TestCase):
                pass


            class Gone(GoneMixin, unittest.TestCase):
                pass


            class Fine(unittest.TestCase):
                def test_module_as_an_object(self):
                    torch.compile(getattr(_mod, "fn"))(torch.ones(1))

                def test_module_attribute(self):
                    torch.compile(_mod.fn)(torch.ones(1))

                def test_missing_attribute(self):
                    torch.compile(_mod.nothing)(torch.ones(1))
        """,
        "_mod": "def fn(t):\n    return t + 1\n",
        "_broken": "class BrokenMixin(:\n    pass\n"})
    reasons = {test_id: e.reason for test_id, e in found.items() if isinstance(e, ExtractionFailed)}
    assert reasons == {
        "Diamond": "extraction failed: Diamond: its bases are in an order Python refuses (no consistent MRO)",
        "Far": "extraction failed: a relative import from outside the test's folder (..common import FarBase)",
        "Broken": reasons["Broken"],
        "Gone": "extraction failed: a relative import of _gone, which is no file beside the test",
        "Fine::test_module_as_an_object": "extraction failed: cannot stand alone: uses the module _mod itself, "
                                          "not only names of it",
        "Fine::test_missing_attribute": "extraction failed: cannot stand alone: _mod.nothing: _mod.py defines no "
                                        "nothing of its own",
    }
    assert reasons["Broken"].startswith("extraction failed: _broken.py beside the test cannot be read: ")
    assert "def fn(t):\n    return t + 1\n" in source_of(found, "Fine::test_module_attribute")
    assert "torch.compile(fn)(torch.ones(1))" in source_of(found, "Fine::test_module_attribute")


def test_a_name_that_cannot_be_renamed_apart_fails_that_test():
    found = harvest_folder({
        "test_main": """
            import unittest
            from ._mixin import Mixin


            def os():
                return "the test file's os"


            class T(Mixin, unittest.TestCase):
                def setUp(self):
                    self.name = os()
        """,
        "_mixin": """
            import os.path
            import torch


            class Mixin:
                def test_path(self):
                    torch.compile(lambda t: t)(torch.ones(1))
                    self.assertTrue(os.path.sep)
        """})
    failed = found["T::test_path"]
    assert isinstance(failed, ExtractionFailed)
    assert failed.reason == ("extraction failed: cannot stand alone: os (import os.path) would have to be renamed "
                             "apart, which a dotted import cannot be")


# -- the harvester: siblings read through the folder, helper modules not taken for scripts -------
def test_harvesting_the_folder_takes_mixin_modules_as_modules_not_scripts(tmp_path: Path):
    out = tmp_path / "out"
    report = Harvester(passing, FindingStore(out), out, torch_version="2.test", workers=1).harvest([INHERIT])
    written = {json.loads(Path(p).with_suffix(".json").read_text())["origin"].split("/")[-1]
               for p in report.written}
    assert written == {f"test_set_types.py::{cls}::{test}" for cls in (
        "SetTypeTests", "PlainSetTests", "SubclassedSetTests", "FrozenSetTests") for test in SET_TESTS} | {
        f"test_mixed_in.py::MixedInTests::{test}" for test in (
            "test_clipped_sum", "test_own_offset", "test_rotates_by_pi", "test_shift_then_scale")}
    assert report.not_programs == [f"{INHERIT / name}: a module the files beside it import, harvested through them"
                                   for name in ("_mixin_a.py", "_mixin_b.py")]
    assert report.files == 4 and report.test_files == 2 and report.scripts == 0 and report.ok
    assert not isinstance(harvest_file(INHERIT / "test_mixed_in.py")["MixedInTests::test_own_offset"], NotHarvested)


def test_a_bug_of_ours_collecting_one_class_costs_that_class(monkeypatch):
    tests = Hierarchy.tests

    def broken_for_frozen(self, cls):  # type: ignore[no-untyped-def]
        if cls.name == "FrozenSetTests":
            raise KeyError("a class shape collection never met")
        return tests(self, cls)

    monkeypatch.setattr(Hierarchy, "tests", broken_for_frozen)
    found = harvest_file(INHERIT / "test_set_types.py")
    assert [test_id for test_id, e in found.items() if isinstance(e, Harvested)] == [
        f"{cls}::{test}" for cls in ("SetTypeTests", "PlainSetTests", "SubclassedSetTests") for test in SET_TESTS]
    assert found["FrozenSetTests"] == ExtractionFailed(
        "FrozenSetTests", "extraction failed: KeyError: 'a class shape collection never met'")
