"""Before/after and decline tests for the S (splice) operators: a part of a donor program
brought into the compiled region of a recipient, with what it needs, renamed where it clashes."""

from __future__ import annotations

import builtins
import textwrap

import pytest

from mutator.core.program import Program, ProgramForm
from mutator.mutation.operator import Mutant
from mutator.mutation.operators.splice import (
    SpliceClass,
    SpliceContainerSubclass,
    SpliceContextManager,
    SpliceDecorator,
    SpliceHelper,
)
from mutator.reduce.reducer import unbound_names

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites, rewrite

RECIPIENT = """
    import torch


    def scale(x):
        return x * 2


    def fn(x):
        y = x.sin()
        z = scale(y)
        return {"out": z + 1, "parts": [y, z]}


    def inputs():
        return (torch.randn(3),)
"""

# a donor with a helper whose name the recipient has too, a constant it reads, and a class using both
AFFINE = """
    import math

    import torch

    SCALE = 0.5


    def scale(t, k):
        return t * k + SCALE


    class Affine:
        def __init__(self, weight):
            self.weight = weight

        def shifted(self, t):
            return scale(t, self.weight) + math.pi


    def fn(x):
        y = scale(x, 3.0)
        y = scale(y, 2.0)
        return Affine(2.0).shifted(y)


    def inputs():
        return (torch.randn(3),)
"""


def assert_valid_splice(mutant: Mutant, recipient: str = RECIPIENT) -> None:
    """A splice is still a program of the recipient's form, with its harness, and reads no
    name it does not bind."""
    program = Program.from_source(mutant.program.source, "spliced.py")
    before = Program.from_source(textwrap.dedent(recipient).strip() + "\n", "prog.py")
    assert program.form is before.form
    if program.form is ProgramForm.HARNESS:
        assert "\ndef fn(" in program.source or "\nfn = " in program.source
        assert "\ndef inputs(" in program.source
    assert unbound_names(program.source) - set(dir(builtins)) == set()


def test_splice_helper_brings_the_helper_renamed_with_its_constant_and_feeds_back_its_transform():
    after = """
        import torch

        # spliced from donor.py: scale
        SCALE = 0.5


        def scale_2(t, k):
            return t * k + SCALE


        def scale(x):
            return x * 2


        def fn(x):
            y = x.sin()
            y = scale_2(y, 2.0)
            z = scale(y)
            return {"out": z + 1, "parts": [y, z]}


        def inputs():
            return (torch.randn(3),)
    """
    assert_valid_splice(assert_rewrites(SpliceHelper, RECIPIENT, after, seed=15, donor=AFFINE))


def test_splice_helper_records_what_a_call_the_donor_does_not_assign_back_returns():
    mutant = rewrite(SpliceHelper, RECIPIENT, seed=1, donor=AFFINE)
    assert isinstance(mutant, Mutant)
    assert '    SPLICED["scale"] = scale_2(y, 3.0)\n' in mutant.program.source
    assert_valid_splice(mutant)


def test_splice_helper_calls_a_donor_harness_fn_on_its_inputs_fitted_from_the_recipients_tensor():
    mutant = rewrite(SpliceHelper, RECIPIENT, seed=0, donor=AFFINE)
    assert isinstance(mutant, Mutant)
    source = mutant.program.source
    assert "\ndef fn_2(x):\n    y = scale_2(x, 3.0)\n" in source  # with what it calls: all of the donor
    assert "\nclass Affine:\n" in source and "\nimport math\n" in source
    assert "\nDONOR_INPUTS = inputs_2()\n" in source
    assert '    SPLICED["fn"] = fn_2(*[_fit(y, arg) for arg in DONOR_INPUTS])\n' in source
    assert_valid_splice(mutant)


def test_splice_class_instantiates_it_in_the_region_and_calls_a_method_on_a_tensor():
    after = """
        import torch
        import math

        # spliced from donor.py: Affine
        SCALE = 0.5


        def scale_2(t, k):
            return t * k + SCALE


        class Affine:
            def __init__(self, weight):
                self.weight = weight

            def shifted(self, t):
                return scale_2(t, self.weight) + math.pi


        SPLICED = {}


        def scale(x):
            return x * 2


        def fn(x):
            y = x.sin()
            spliced = Affine(2.0)
            SPLICED["Affine.shifted"] = spliced.shifted(y)
            z = scale(y)
            return {"out": z + 1, "parts": [y, z]}


        def inputs():
            return (torch.randn(3),)
    """
    assert_valid_splice(assert_rewrites(SpliceClass, RECIPIENT, after, seed=1, donor=AFFINE))


NET = """
    import torch


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(6, 2)

        def forward(self, x, flag):
            return self.lin(x) if flag else x


    fn = Net()


    def inputs():
        return (torch.randn(3, 6), True)
"""


def test_splice_class_calls_the_donors_module_on_its_inputs_fitted_from_the_recipients_tensor():
    mutant = rewrite(SpliceClass, RECIPIENT, seed=0, donor=NET)
    assert isinstance(mutant, Mutant)
    source = mutant.program.source
    assert "\ndef inputs_2():\n    return (torch.randn(3, 6), True)\n" in source  # the donor's, renamed
    assert "\nnet_instance = Net()\nDONOR_INPUTS = inputs_2()\n" in source  # built at load time
    assert '    SPLICED["Net.__call__"] = net_instance(*[_fit(y, arg) for arg in DONOR_INPUTS])\n' in source
    assert_valid_splice(mutant)


COUNTED = """
    import functools

    import torch

    CALLS = {}


    def counted(tag):
        def wrap(f):
            @functools.wraps(f)
            def inner(*args):
                CALLS[tag] = CALLS.get(tag, 0) + 1
                return f(*args)
            return inner
        return wrap


    @counted("double")
    def double(x):
        return x * 2


    def fn(x):
        return double(x)


    def inputs():
        return (torch.randn(3),)
"""


def test_splice_decorator_applies_the_donors_decorator_as_the_donor_does_to_a_function_the_region_calls():
    after = """
        import torch
        import functools

        # spliced from donor.py: counted
        CALLS = {}


        def counted(tag):
            def wrap(f):
                @functools.wraps(f)
                def inner(*args):
                    CALLS[tag] = CALLS.get(tag, 0) + 1
                    return f(*args)
                return inner
            return wrap


        @counted("double")
        def scale(x):
            return x * 2


        def fn(x):
            y = x.sin()
            z = scale(y)
            return {"out": z + 1, "parts": [y, z]}


        def inputs():
            return (torch.randn(3),)
    """
    assert_valid_splice(assert_rewrites(SpliceDecorator, RECIPIENT, after, seed=0, donor=COUNTED))


LOGGED = """
    import contextlib

    import torch

    LOG = []


    @contextlib.contextmanager
    def logged(tag):
        LOG.append("enter " + tag)
        try:
            yield
        finally:
            LOG.append("exit " + tag)


    def fn(x):
        with logged("fn"):
            return x + 1


    def inputs():
        return (torch.randn(3),)
"""


def test_splice_context_manager_wraps_statements_of_the_region_as_the_donor_enters_it():
    after = """
        import torch
        import contextlib

        # spliced from donor.py: logged
        LOG = []


        @contextlib.contextmanager
        def logged(tag):
            LOG.append("enter " + tag)
            try:
                yield
            finally:
                LOG.append("exit " + tag)


        def scale(x):
            return x * 2


        def fn(x):
            with logged("fn"):
                y = x.sin()
                z = scale(y)
                return {"out": z + 1, "parts": [y, z]}


        def inputs():
            return (torch.randn(3),)
    """
    assert_valid_splice(assert_rewrites(SpliceContextManager, RECIPIENT, after, seed=1, donor=LOGGED))


SCRIPT = """
    import torch


    @torch.compile(backend="eager")
    def step(x):
        y = x.cos()
        return y * 3


    print(step(torch.ones(2)))
"""


def test_splice_context_manager_into_a_script_keeps_it_a_script():
    after = """
        import torch
        import contextlib

        # spliced from donor.py: logged
        LOG = []


        @contextlib.contextmanager
        def logged(tag):
            LOG.append("enter " + tag)
            try:
                yield
            finally:
                LOG.append("exit " + tag)


        @torch.compile(backend="eager")
        def step(x):
            with logged("fn"):
                y = x.cos()
            return y * 3


        print(step(torch.ones(2)))
    """
    mutant = assert_rewrites(SpliceContextManager, SCRIPT, after, seed=6, donor=LOGGED)
    assert_valid_splice(mutant, SCRIPT)


BAG = """
    import torch


    class Bag(list):
        def total(self):
            return sum(self)


    def fn(x):
        return Bag([x, x]).total()


    def inputs():
        return (torch.randn(3),)
"""


def test_splice_container_subclass_builds_a_container_of_its_kind_in_the_region_as_it():
    after = """
        import torch


        # spliced from donor.py: Bag
        class Bag(list):
            def total(self):
                return sum(self)


        def scale(x):
            return x * 2


        def fn(x):
            y = x.sin()
            z = scale(y)
            return {"out": z + 1, "parts": Bag([y, z])}


        def inputs():
            return (torch.randn(3),)
    """
    assert_valid_splice(assert_rewrites(SpliceContainerSubclass, RECIPIENT, after, donor=BAG))


def test_a_donor_name_the_harness_reads_is_renamed_and_an_identical_import_is_shared():
    donor = """
        import torch

        COMPILE_KWARGS = {"fullgraph": True}


        def drive(t):
            return t * COMPILE_KWARGS["fullgraph"]


        def fn(x):
            return drive(x)


        def inputs():
            return (torch.randn(3),)
    """
    mutant = rewrite(SpliceHelper, RECIPIENT, seed=0, donor=donor)
    assert isinstance(mutant, Mutant)
    source = mutant.program.source
    assert source.count("import torch") == 1
    assert "\nCOMPILE_KWARGS_2 = " in source and "\ndef drive_2(t):" in source
    assert "\nCOMPILE_KWARGS =" not in source and "\ndef drive(" not in source  # the harness sees no new hook
    assert_valid_splice(mutant)


# -- declines ------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", [SpliceClass, SpliceDecorator, SpliceContextManager, SpliceContainerSubclass])
def test_a_donor_without_that_kind_of_part_declines(op):
    only_a_helper = """
        import torch


        def halve(t):
            return t / 2


        def fn(x):
            return halve(x)


        def inputs():
            return (torch.randn(3),)
    """
    kind = op.KIND.replace("_", " ")
    assert_declines(op, RECIPIENT, f"the donor donor.py has no {kind} to splice", donor=only_a_helper)


def test_without_a_donor_a_splice_declines():
    assert_declines(SpliceHelper, RECIPIENT, "a splice needs a donor")


def test_a_container_subclass_of_a_kind_the_region_does_not_build_declines():
    sets_only = BAG.replace("class Bag(list)", "class Bag(set)").replace("Bag([x, x])", "Bag({1, 2})")
    assert_declines(SpliceContainerSubclass, RECIPIENT, "no site of the compiled region fits the donor's Bag",
                    donor=sets_only)


def test_a_clash_on_a_dotted_import_that_cannot_be_renamed_declines():
    recipient = RECIPIENT.replace("def scale(x):", "os = 3\n\n\n    def scale(x):")
    donor = """
        import os.path

        import torch


        def joined(t):
            return t * len(os.path.join("a", "b"))


        def fn(x):
            return joined(x)


        def inputs():
            return (torch.randn(3),)
    """
    assert_declines(SpliceHelper, recipient, "cannot rename the donor's `import os.path`: the recipient binds os",
                    donor=donor)


@pytest.mark.parametrize("needs, reason", [
    ("t * MISSING", "reads MISSING, which the donor never binds"),
    ("t * FAST", "the donor's FAST is bound in a compound statement"),
    ("FAST_STEP(t)", "the donor's FAST_STEP compiles code itself"),
])
def test_a_part_needing_what_cannot_come_along_declines(needs, reason):
    donor = f"""
        import torch

        try:
            FAST = 2.0
        except ImportError:
            FAST = 1.0

        FAST_STEP = torch.compile(torch.sin)


        def helper(t):
            return {needs}


        def fn(x):
            return helper(x)


        def inputs():
            return (torch.randn(3),)
    """
    assert_declines(SpliceHelper, RECIPIENT, reason, donor=donor)


def test_a_context_manager_the_donor_only_enters_with_its_own_values_declines():
    donor = LOGGED.replace('with logged("fn"):', "with logged(str(x)):")
    assert_declines(SpliceContextManager, RECIPIENT, "the donor enters its logged only with arguments it computes",
                    donor=donor)
