"""Before/after and decline tests for the E1 (context manager) operators."""

from mutator.mutation.operators.contexts import (
    ContextSibling,
    GraphBreakInWith,
    WrapInAutocast,
    WrapInExitStack,
    WrapInGradMode,
    WrapInTorchFunctionMode,
    WrapInUserContext,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites

NOTHING_TO_WRAP = """
    import torch

    COUNT = 0

    def fn(x):
        \"\"\"Only a docstring and a declaration: nothing can move under a new construct.\"\"\"
        global COUNT
"""


def test_wrap_in_grad_mode_puts_statements_under_enable_grad():
    before = """
        import torch

        def fn(x):
            y = x.sin()
            return y + 1
    """
    after = """
        import torch

        def fn(x):
            with torch.enable_grad():
                y = x.sin()
            return y + 1
    """
    assert_rewrites(WrapInGradMode, before, after, seed=2)


def test_wrap_in_autocast_keeps_the_docstring_first():
    before = """
        import torch

        def fn(x):
            '''Doubles.'''
            y = x * 2
            return y
    """
    after = """
        import torch

        def fn(x):
            '''Doubles.'''
            with torch.autocast("cpu", dtype=torch.bfloat16):
                y = x * 2
                return y
    """
    assert_rewrites(WrapInAutocast, before, after, seed=1)


def test_user_context_generator_records_open_and_close():
    before = """
        import torch

        def fn(x):
            '''Doubles.'''
            y = x * 2
            return y
    """
    after = """
        import torch
        import contextlib

        CONTEXT_EVENTS = {}


        @contextlib.contextmanager
        def recorded(tag):
            CONTEXT_EVENTS["open:" + tag] = len(CONTEXT_EVENTS)
            try:
                yield len(CONTEXT_EVENTS)
            finally:
                CONTEXT_EVENTS["close:" + tag] = len(CONTEXT_EVENTS)


        def fn(x):
            '''Doubles.'''
            y = x * 2
            with recorded("inner"):
                return y
    """
    assert_rewrites(WrapInUserContext, before, after, seed=0)


def test_user_context_global_instance():
    before = """
        import torch

        def fn(x):
            '''Doubles.'''
            y = x * 2
            return y
    """
    after = """
        import torch

        CONTEXT_EVENTS = {}


        class Recorder:
            def __init__(self, tag):
                self.tag = tag
                self.depth = 0

            def __enter__(self):
                self.depth += 1
                CONTEXT_EVENTS["enter:" + self.tag] = self.depth
                return self

            def __exit__(self, exc_type, exc, tb):
                CONTEXT_EVENTS["exit:" + self.tag] = (self.depth, exc_type is None)
                self.depth -= 1
                return False


        RECORDER = Recorder("global")


        def fn(x):
            '''Doubles.'''
            y = x * 2
            with RECORDER:
                return y
    """
    assert_rewrites(WrapInUserContext, before, after, seed=4)


def test_exit_stack_enters_a_grad_mode_and_logs():
    before = """
        import torch

        def fn(x):
            '''Doubles.'''
            y = x * 2
            return y
    """
    after = """
        import torch
        import contextlib

        EXIT_LOG = {}


        def fn(x):
            '''Doubles.'''
            with contextlib.ExitStack() as stack:
                stack.callback(EXIT_LOG.__setitem__, "callback", len(EXIT_LOG))
                stack.enter_context(torch.no_grad())
                y = x * 2
                return y
    """
    assert_rewrites(WrapInExitStack, before, after, seed=1)


def test_torch_function_mode_counts_and_rescales_adds():
    before = """
        import torch

        def fn(x):
            '''Doubles.'''
            y = x * 2
            return y
    """
    after = """
        import torch

        MODE_SEEN = {}


        class RecordingMode(torch.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                name = getattr(func, "__name__", "other")
                if name != "__get__":
                    MODE_SEEN[name] = True
                out = func(*args, **kwargs)
                if func in (torch.add, torch.Tensor.add, torch.Tensor.__add__):
                    out = out * 0.5
                return out


        def fn(x):
            '''Doubles.'''
            y = x * 2
            with RecordingMode():
                return y
    """
    assert_rewrites(WrapInTorchFunctionMode, before, after, seed=0)


def test_graph_break_goes_inside_the_with_body():
    before = """
        import torch

        def fn(x):
            with torch.no_grad():
                y = x * 2
            return y + x

        def drive(f):
            with torch.enable_grad():
                return f(torch.ones(2))
    """
    after = """
        import torch

        def fn(x):
            with torch.no_grad():
                torch._dynamo.graph_break()
                y = x * 2
            return y + x

        def drive(f):
            with torch.enable_grad():
                return f(torch.ones(2))
    """
    assert_rewrites(GraphBreakInWith, before, after, seed=1)


def test_context_sibling_swaps_a_region_context():
    before = """
        import torch

        def fn(x):
            with torch.no_grad():
                y = x * 2
            return y + x

        def drive(f):
            with torch.enable_grad():
                return f(torch.ones(2))
    """
    after = """
        import torch

        def fn(x):
            with torch.enable_grad():
                y = x * 2
            return y + x

        def drive(f):
            with torch.enable_grad():
                return f(torch.ones(2))
    """
    assert_rewrites(ContextSibling, before, after, seed=2)


def test_context_sibling_swaps_the_driver_context():
    before = """
        import torch

        def fn(x):
            with torch.no_grad():
                y = x * 2
            return y + x

        def drive(f):
            with torch.enable_grad():
                return f(torch.ones(2))
    """
    after = """
        import torch

        def fn(x):
            with torch.no_grad():
                y = x * 2
            return y + x

        def drive(f):
            with torch.inference_mode():
                return f(torch.ones(2))
    """
    assert_rewrites(ContextSibling, before, after, seed=0)


def test_context_sibling_negates_a_data_dependent_grad_flag():
    before = """
        import contextlib
        import torch

        def fn(x, track):
            with contextlib.ExitStack() as stack:
                stack.enter_context(torch.autocast("cpu", enabled=False))
                y = x @ x
            with torch.set_grad_enabled(track):
                z = y * 2
            return z
    """
    after = """
        import contextlib
        import torch

        def fn(x, track):
            with contextlib.ExitStack() as stack:
                stack.enter_context(torch.autocast("cpu", enabled=False))
                y = x @ x
            with torch.set_grad_enabled(not track):
                z = y * 2
            return z
    """
    assert_rewrites(ContextSibling, before, after, seed=0)


def test_context_sibling_swaps_an_exit_stack_entry():
    before = """
        import contextlib
        import torch

        def fn(x, track):
            with contextlib.ExitStack() as stack:
                stack.enter_context(torch.autocast("cpu", enabled=False))
                y = x @ x
            with torch.set_grad_enabled(track):
                z = y * 2
            return z
    """
    after = """
        import contextlib
        import torch

        def fn(x, track):
            with contextlib.ExitStack() as stack:
                stack.enter_context(contextlib.nullcontext())
                y = x @ x
            with torch.set_grad_enabled(track):
                z = y * 2
            return z
    """
    assert_rewrites(ContextSibling, before, after, seed=1)


def test_wrapping_operators_decline_without_movable_statements():
    for op in (WrapInGradMode, WrapInAutocast, WrapInUserContext, WrapInExitStack, WrapInTorchFunctionMode):
        assert_declines(op, NOTHING_TO_WRAP, f"no site for {op.name} in the region")


def test_graph_break_in_with_declines_without_a_with_block():
    before = """
        import torch

        def fn(x):
            return x.sin()
    """
    assert_declines(GraphBreakInWith, before, "no site for graph_break_in_with in the region")


def test_context_sibling_leaves_decorators_bound_contexts_and_function_forms_alone():
    before = """
        import torch

        @torch.no_grad()
        def fn(x):
            torch.set_grad_enabled(False)
            with torch.enable_grad() as mode:
                y = x * 2
            torch.set_grad_enabled(True)
            return y
    """
    assert_declines(ContextSibling, before, "no site for context_sibling in the program")
