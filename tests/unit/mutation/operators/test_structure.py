"""Before/after and decline tests for the X operators in structure.py."""

from mutator.mutation.operators.structure import (
    DuplicateCall,
    InsertGraphBreak,
    StackCompiledCall,
    ToggleDynamic,
    ToggleFullgraph,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites


def test_inserts_graph_break_between_statements():
    before = """
        import torch

        def fn(x):
            y = x.sin()
            return y + 1
    """
    after = """
        import torch

        def fn(x):
            y = x.sin()
            torch._dynamo.graph_break()
            return y + 1
    """
    result = assert_rewrites(InsertGraphBreak, before, after, seed=0)
    assert result.steps[0].site == "fn:4"  # the block's first line


def test_graph_break_only_inside_the_compiled_region():
    before = """
        import torch

        def helper_not_called(x):
            return x

        def fn(x):
            return x.cos()
    """
    after = """
        import torch

        def helper_not_called(x):
            return x

        def fn(x):
            torch._dynamo.graph_break()
            return x.cos()
    """
    assert_rewrites(InsertGraphBreak, before, after, seed=3)


def test_declines_without_a_compiled_region():
    before = """
        import torch

        class M(torch.nn.Module):
            pass

        fn = M()
    """
    assert_declines(InsertGraphBreak, before, "no site for insert_graph_break in the region")


# -- X.duplicate_call ---------------------------------------------------------------------------

def test_duplicates_a_pure_call_in_a_tuple_and_keeps_the_second():
    before = """
        import torch

        def fn(x, w):
            y = torch.mm(x, w)
            return y + x.sum()
    """
    after = """
        import torch

        def fn(x, w):
            y = torch.mm(x, w)
            return y + (x.sum(), x.sum())[1]
    """
    assert_rewrites(DuplicateCall, before, after, seed=0)


def test_duplicates_a_call_through_a_call_twice_helper():
    before = """
        import torch

        def fn(x, w):
            y = torch.mm(x, w)
            return y + x.sum()
    """
    after = """
        import torch


        def call_twice(callee, /, *args, **kwargs):
            callee(*args, **kwargs)
            return callee(*args, **kwargs)


        def fn(x, w):
            y = call_twice(torch.mm, x, w)
            return y + x.sum()
    """
    assert_rewrites(DuplicateCall, before, after, seed=2)


def test_duplicate_declines_mutating_random_and_iterator_consuming_calls():
    before = """
        import torch

        def fn(x, out):
            out.append(x.add_(1))
            return torch.randn(3) + next(iter(out)) + sum(t for t in out)
    """
    assert_declines(DuplicateCall, before, "no site for duplicate_call")


# -- X.stack_compiled_call ----------------------------------------------------------------------

HARNESS_WITH_DRIVE = """
    import torch

    def fn(x):
        return x + 1

    def inputs():
        return (torch.ones(2),)

    def drive(f):
        a = f(torch.ones(2) * 3)
        return a
"""


def test_stacks_a_call_of_the_compiled_function_in_drive():
    after = """
        import torch

        def fn(x):
            return x + 1

        def inputs():
            return (torch.ones(2),)

        def drive(f):
            extra_calls = []
            extra_calls.append(f(*inputs()))
            a = f(torch.ones(2) * 3)
            return a, extra_calls
    """
    assert_rewrites(StackCompiledCall, HARNESS_WITH_DRIVE, after, seed=1)


def test_stacks_a_copy_of_an_earlier_call_in_drive():
    after = """
        import torch

        def fn(x):
            return x + 1

        def inputs():
            return (torch.ones(2),)

        def drive(f):
            extra_calls = []
            a = f(torch.ones(2) * 3)
            extra_calls.append(f(torch.ones(2) * 3))
            return a, extra_calls
    """
    assert_rewrites(StackCompiledCall, HARNESS_WITH_DRIVE, after, seed=0)


def test_creates_drive_when_missing():
    before = """
        import torch

        def fn(x):
            return x + 1

        def inputs():
            return (torch.ones(2),)
    """
    after = """
        import torch

        def fn(x):
            return x + 1

        def inputs():
            return (torch.ones(2),)


        def drive(f):
            first = f(*inputs())
            return first, f(*inputs())
    """
    assert_rewrites(StackCompiledCall, before, after, seed=0)


def test_repeats_a_top_level_call_of_a_compiled_function_in_a_script():
    before = """
        import torch

        @torch.compile
        def step(x):
            return x * 2

        x = torch.ones(3)
        print(step(x))
    """
    after = """
        import torch

        @torch.compile
        def step(x):
            return x * 2

        x = torch.ones(3)
        print(step(x))
        print(step(x))
    """
    assert_rewrites(StackCompiledCall, before, after, seed=0)


def test_stack_declines_a_script_that_never_calls_its_compiled_function():
    before = """
        import torch

        def step(x):
            return x * 2

        compiled = torch.compile(step)
        print(step(torch.ones(3)))
    """
    assert_declines(StackCompiledCall, before, "no site for stack_compiled_call")


# -- X.toggle_fullgraph / X.toggle_dynamic -------------------------------------------------------

HARNESS_WITH_KWARGS = """
    import torch

    def fn(x):
        return x + 1

    def inputs():
        return (torch.ones(2),)

    COMPILE_KWARGS = {"fullgraph": True, "dynamic": False}
"""


def test_toggle_fullgraph_flips_compile_kwargs():
    after = HARNESS_WITH_KWARGS.replace('"fullgraph": True', '"fullgraph": False')
    assert_rewrites(ToggleFullgraph, HARNESS_WITH_KWARGS, after, seed=0)


def test_toggle_fullgraph_creates_compile_kwargs():
    before = """
        import torch

        def fn(x):
            return x + 1

        def inputs():
            return (torch.ones(2),)
    """
    after = """
        import torch

        def fn(x):
            return x + 1

        def inputs():
            return (torch.ones(2),)


        COMPILE_KWARGS = {"fullgraph": True}
    """
    assert_rewrites(ToggleFullgraph, before, after, seed=0)


def test_toggle_fullgraph_adds_the_option_to_a_bare_decorator():
    before = """
        import torch

        @torch.compile
        def step(x):
            return x * 2

        print(step(torch.ones(3)))
    """
    assert_rewrites(ToggleFullgraph, before, before.replace("@torch.compile", "@torch.compile(fullgraph=True)"))


def test_toggle_dynamic_sets_another_value():
    assert_rewrites(ToggleDynamic, HARNESS_WITH_KWARGS,
                    HARNESS_WITH_KWARGS.replace('"dynamic": False', '"dynamic": None'), seed=0)
    before = """
        import torch

        def step(x):
            return x * 2

        compiled = torch.compile(step, dynamic=True)
        print(compiled(torch.ones(3)))
    """
    assert_rewrites(ToggleDynamic, before, before.replace("dynamic=True", "dynamic=False"), seed=1)


def test_toggles_decline_compile_kwargs_that_are_not_a_dict_display():
    before = """
        import torch

        def fn(x):
            return x + 1

        def inputs():
            return (torch.ones(2),)

        COMPILE_KWARGS = dict(fullgraph=True)
    """
    assert_declines(ToggleFullgraph, before, "no site for toggle_fullgraph")
    assert_declines(ToggleDynamic, before, "no site for toggle_dynamic")
