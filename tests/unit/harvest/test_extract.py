"""Test files into programs: before/after source, the way LibCST tests transformations."""

from __future__ import annotations

import textwrap

import pytest

from mutator.core.program import Program, ProgramForm
from mutator.harvest import framework
from mutator.harvest.extract import ExtractionError, ExtractionFailed, Harvested, NotHarvested, extract, is_test_file


def harvest(source: str) -> dict[str, Harvested | NotHarvested]:
    return {e.test_id: e for e in extract(textwrap.dedent(source).lstrip())}


def program_of(source: str, test_id: str) -> str:
    found = harvest(source)[test_id]
    assert isinstance(found, Harvested), found
    return found.source


def test_a_pytest_function_keeps_what_it_reaches_and_runs_itself():
    before = """
        import os
        import torch

        SCALE = 2.0
        UNUSED = {"a": 1}


        def helper(x):
            return x * SCALE


        def test_helper():
            f = torch.compile(helper, backend="eager")
            assert f(torch.ones(1)).item() == 2.0


        def test_other():
            assert torch.compile(abs)(torch.ones(1)).item() == 1.0
    """
    after = textwrap.dedent('''
        import torch


        SCALE = 2.0


        def helper(x):
            return x * SCALE


        def test_helper():
            f = torch.compile(helper, backend="eager")
            assert f(torch.ones(1)).item() == 2.0


        if __name__ == "__main__":
            test_helper()
    ''').lstrip()
    assert program_of(before, "test_helper") == after


def test_a_unittest_method_keeps_its_class_set_up_and_helpers_but_not_other_tests():
    source = """
        import torch
        import torch._dynamo.test_case


        class Shared:
            factor = 3


        class T(torch._dynamo.test_case.TestCase):
            width = 4
            unused_attribute = 9

            def setUp(self):
                super().setUp()
                self.x = torch.ones(self.width)

            def compile_it(self, fn):
                return torch.compile(fn, backend="eager")

            def unused_helper(self):
                return 1

            def test_a(self):
                f = self.compile_it(lambda t: t * Shared.factor)
                self.assertEqual(f(self.x), self.x * 3)

            def test_b(self):
                self.assertTrue(torch.compile(abs)(self.x).sum() > 0)


        if __name__ == "__main__":
            torch._dynamo.test_case.run_tests()
    """
    program = program_of(source, "T::test_a")
    cls = program[program.index("class T("):program.index('if __name__')]
    assert cls == textwrap.dedent('''
        class T(HarvestedDynamoChecks):
            width = 4

            def setUp(self):
                super().setUp()
                self.x = torch.ones(self.width)

            def compile_it(self, fn):
                return torch.compile(fn, backend="eager")

            def test_a(self):
                f = self.compile_it(lambda t: t * Shared.factor)
                self.assertEqual(f(self.x), self.x * 3)


    ''').lstrip()
    assert "class Shared:" in program and "run_tests" not in program and "test_b" not in program
    assert program.endswith('if __name__ == "__main__":\n    HarvestedChecks.harvested_run(T, "test_a", {})\n')
    assert "def assertEqual" in program and "def assertTrue" not in program  # only the checks the test calls
    assert Program.from_source(program, "h.py").form is ProgramForm.SCRIPT


@pytest.mark.parametrize("imports,base,stand_in", [
    ("import torch._dynamo.test_case", "torch._dynamo.test_case.TestCase", "HarvestedDynamoChecks"),
    ("from torch._dynamo.test_case import TestCase", "TestCase", "HarvestedDynamoChecks"),
    ("from torch._dynamo import test_case", "test_case.TestCase", "HarvestedDynamoChecks"),
    ("from torch._inductor.test_case import TestCase as InductorTestCase", "InductorTestCase",
     "HarvestedDynamoChecks"),
    ("import unittest", "unittest.TestCase", "HarvestedChecks"),
    ("from torch.testing._internal.common_utils import TestCase", "TestCase", "HarvestedChecks"),
])
def test_a_test_of_dynamos_testcase_keeps_it_behind_the_plain_checks(imports, base, stand_in):
    """Torch's Dynamo TestCase (and Inductor's, derived from it) gives its tests their
    configuration in its own set-up, which the program must run: it stays a base."""
    program = program_of(f"""
        import torch
        {imports}


        class Base({base}):
            pass


        class T(Base):
            def test_a(self):
                self.assertEqual(torch.compile(abs)(torch.ones(2)), torch.ones(2))
    """, "T::test_a")
    assert f"class Base({stand_in}):" in program
    dynamo = stand_in == framework.DYNAMO_BASE
    assert ("class HarvestedDynamoChecks(HarvestedChecks, torch._dynamo.test_case.TestCase):" in program) is dynamo
    assert ("import torch._dynamo.test_case\n" in program) is dynamo
    assert program.index("class HarvestedChecks(") < program.index("class Base(")
    assert program.endswith('HarvestedChecks.harvested_run(T, "test_a", {})\n')


def test_parametrised_tests_give_one_program_per_parameter_set():
    found = harvest("""
        import pytest
        import torch
        from torch.testing._internal.common_utils import parametrize, TestCase

        SIZES = [1, 3]


        class T(TestCase):
            @parametrize("n", SIZES)
            @parametrize("flip", [True, False])
            def test_sizes(self, n, flip):
                torch.compile(lambda t: t.flip(0) if flip else t)(torch.ones(n))


        @pytest.mark.parametrize("a,b", [(1, 2), (3, 4)])
        def test_pairs(a, b):
            torch.compile(lambda t: t * a + b)(torch.ones(1))
    """)
    assert sorted(found) == ["T::test_sizes[n=1,flip=False]", "T::test_sizes[n=1,flip=True]",
                             "T::test_sizes[n=3,flip=False]", "T::test_sizes[n=3,flip=True]",
                             "test_pairs[a=1,b=2]", "test_pairs[a=3,b=4]"]
    program = found["T::test_sizes[n=3,flip=False]"].source
    assert '{"n": 3, "flip": False}' in program and "@parametrize" not in program
    assert found["test_pairs[a=3,b=4]"].source.endswith("    test_pairs(a=3, b=4)\n")


def test_what_is_not_harvested_says_why():
    found = harvest("""
        import unittest
        import pytest
        import torch


        class T(unittest.TestCase):
            @unittest.skip("broken here")
            def test_skipped(self):
                torch.compile(abs)(torch.ones(1))

            @unittest.expectedFailure
            def test_xfail(self):
                torch.compile(abs)(torch.ones(1))

            def test_nothing(self):
                self.assertEqual(abs(-1), 1)

            @unittest.skipIf(False, "decided when it runs")
            def test_runtime_skip(self):
                torch.compile(abs)(torch.ones(1))


        def test_fixture(tmp_path):
            torch.compile(abs)(torch.ones(1))


        @pytest.mark.parametrize("n", list(range(3)))
        def test_computed(n):
            torch.compile(abs)(torch.ones(n))
    """)
    reasons = {k: v.reason for k, v in found.items() if isinstance(v, NotHarvested)}
    assert reasons == {
        "T::test_skipped": 'skipped: unittest.skip("broken here")',
        "T::test_xfail": "expected to fail",
        "test_fixture": "takes arguments no parameter set gives (a pytest fixture)",
        "test_computed": "parametrised over values not written as a literal",
    }
    assert "@unittest.skipIf(False" in found["T::test_runtime_skip"].source  # the harvester runs it to know
    # nothing in its text compiles, but another module's code might: running it decides
    assert isinstance(found["T::test_nothing"], Harvested) and not found["T::test_nothing"].compiles_visibly
    assert found["T::test_runtime_skip"].compiles_visibly


def test_compiling_visibly_through_a_module_decorator_counts_and_torch_compiler_reset_does_not():
    found = harvest("""
        import torch


        def compiled_test(fn):
            def run(self):
                return torch.compile(fn, backend="eager")(torch.ones(2))
            return run


        def test_resets():
            torch.compiler.reset()


        class Tests:
            @compiled_test
            def test_decorated(t):
                return t + 1
    """)
    assert not found["test_resets"].compiles_visibly  # running it decides (it compiles nothing)
    assert found["Tests::test_decorated"].compiles_visibly
    assert "def compiled_test(fn):" in found["Tests::test_decorated"].source


def test_framework_helpers_become_plain_python():
    program = program_of("""
        import pytest
        import torch
        import torch._dynamo.testing
        from torch._dynamo.test_case import TestCase


        class T(TestCase):
            def test_standard(self):
                torch._dynamo.testing.standard_test(self, lambda a, b: a + b, nargs=2, expected_ops=1)


        def test_raises():
            with pytest.raises(RuntimeError, match="shape"):
                torch.compile(lambda t: t.view(5))(torch.ones(3))
    """, "T::test_standard")
    assert f"{framework.STANDARD_TEST}(self, lambda a, b: a + b, nargs=2, expected_ops=1)" in program
    assert "def harvested_standard_test" in program and "def harvested_same" in program
    pytest_program = program_of("import pytest\nimport torch\n\ndef test_raises():\n    with pytest.raises(Exception):"
                                "\n        torch.compile(abs)(None)\n", "test_raises")
    assert "with harvested_raises(Exception):" in pytest_program and "import pytest" not in pytest_program


def test_module_configuration_is_kept_and_device_tests_run_on_the_cpu():
    program = program_of("""
        import torch
        import torch._dynamo.config

        torch._dynamo.config.capture_scalar_outputs = True


        class DeviceTests(torch.testing._internal.common_utils.TestCase):
            def test_on(self, device):
                torch.compile(lambda t: t + 1)(torch.ones(2, device=device))


        instantiate_device_type_tests(DeviceTests, globals())
    """, "DeviceTests::test_on")
    assert "torch._dynamo.config.capture_scalar_outputs = True" in program
    assert '{"device": "cpu"}' in program and "instantiate_device_type_tests" not in program


def test_test_files_are_told_apart_from_scripts():
    assert is_test_file("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n")
    assert is_test_file("def test_a():\n    pass\n")
    assert not is_test_file("import torch\nf = torch.compile(abs)\nprint(f(torch.ones(1)))\n")
    assert not is_test_file("def (:\n")


def test_assert_no_unraisable_fails_on_what_a_finaliser_raises(tmp_path):
    import subprocess
    import sys

    source = textwrap.dedent('''
        import unittest

        import torch


        class Finalisers(unittest.TestCase):
            def test_noisy(self):
                class Noisy:
                    def __del__(self):
                        raise ValueError("raised in __del__")

                def run():
                    torch.compile(lambda t: t + 1, backend="eager")(torch.ones(1))
                    Noisy()

                self.assertNoUnraisable(run)
    ''')
    [program] = extract(source)
    assert isinstance(program, Harvested) and "import gc\nimport sys\n" in program.source
    (tmp_path / "noisy.py").write_text(program.source)
    proc = subprocess.run([sys.executable, "noisy.py"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 1 and "AssertionError: unraisable exception: ValueError('raised in __del__')" in \
        proc.stderr


# -- what extraction cannot take apart --------------------------------------------------------

def test_extraction_failures_are_results_and_a_file_it_cannot_parse_is_an_extraction_error():
    source = textwrap.dedent('''
        import pytest
        import torch


        @pytest.mark.parametrize(b"n", [1, 2])
        def test_bytes_names(n):
            torch.compile(abs)(torch.ones(n))


        def test_fine():
            torch.compile(abs)(torch.ones(1))
    ''')
    bytes_names, fine = extract(source)  # argument names as bytes: a shape extraction does not expect
    assert isinstance(bytes_names, ExtractionFailed) and bytes_names.test_id == "test_bytes_names"
    assert bytes_names.reason.startswith("extraction failed: TypeError: ")
    assert isinstance(fine, Harvested)
    with pytest.raises(ExtractionError, match="cannot be taken apart"):
        extract("def test_x(:\n")


def test_bases_that_name_each_other_are_no_test_class():
    assert not is_test_file("class A(B):\n    pass\n\n\nclass B(A):\n    pass\n")
