"""Before/after and decline tests for the E3 (closures and captured variables) operators."""

import pytest

from mutator.mutation.operators.closures import (
    CallThroughPartial,
    ExtractToClosure,
    NonlocalCell,
    SharedCellFactory,
    WrapsDecorator,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites

NO_VALUE_STATEMENT = """
    import torch

    def fn(x):
        class Local:
            scale = 2.0  # a class body is not the function's own block
        x.add_(Local.scale)
"""


def test_extract_to_a_nested_def():
    before = """
        import torch

        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    after = """
        import torch

        def scale(x, k, bias=0.0):
            def compute():
                return x * k + bias
            return compute()

        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    assert_rewrites(ExtractToClosure, before, after, seed=2)


def test_extract_to_a_lambda():
    before = """
        import torch

        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    after = """
        import torch

        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            compute = lambda: scale(x, 2.0, bias=1.0)
            y = compute()
            return y.relu()
    """
    assert_rewrites(ExtractToClosure, before, after, seed=0)


def test_extract_to_a_closure_escaping_its_factory():
    before = """
        import torch

        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    after = """
        import torch

        def scale(x, k, bias=0.0):
            def make_compute():
                return lambda: x * k + bias
            compute = make_compute()
            return compute()

        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    assert_rewrites(ExtractToClosure, before, after, seed=1)


def test_nonlocal_setter_and_getter():
    before = """
        import torch

        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    after = """
        import torch

        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            cell = None
            def put(value):
                nonlocal cell
                cell = value
            def get():
                return cell
            put(scale(x, 2.0, bias=1.0))
            y = get()
            return y.relu()
    """
    assert_rewrites(NonlocalCell, before, after, seed=0)


def test_nonlocal_cell_written_by_a_computing_closure():
    before = """
        import torch

        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    after = """
        import torch

        def scale(x, k, bias=0.0):
            cell = None
            def put():
                nonlocal cell
                cell = x * k + bias
            put()
            return cell

        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    assert_rewrites(NonlocalCell, before, after, seed=1)


def test_shared_cell_pair_made_at_import_time():
    before = """
        import torch

        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    after = """
        import torch


        def make_cell():
            value = None

            def put(new):
                nonlocal value
                value = new

            def get():
                return value

            return put, get


        PUT_CELL, GET_CELL = make_cell()


        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            PUT_CELL(scale(x, 2.0, bias=1.0))
            y = GET_CELL()
            return y.relu()
    """
    assert_rewrites(SharedCellFactory, before, after, seed=0)


def test_shared_cell_pair_made_in_the_frame():
    before = """
        import torch

        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    after = """
        import torch


        def make_cell():
            value = None

            def put(new):
                nonlocal value
                value = new

            def get():
                return value

            return put, get


        def scale(x, k, bias=0.0):
            put_cell, get_cell = make_cell()
            put_cell(x * k + bias)
            return get_cell()

        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    assert_rewrites(SharedCellFactory, before, after, seed=2)


def test_partial_holds_a_prefix_of_positional_arguments():
    before = """
        import torch

        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    after = """
        import torch
        import functools

        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            y = functools.partial(scale, x)(2.0, bias=1.0)
            return y.relu()
    """
    assert_rewrites(CallThroughPartial, before, after, seed=3)


def test_partial_holds_positional_arguments_keyword_stays():
    before = """
        import torch

        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    after = """
        import torch
        import functools

        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            y = functools.partial(scale, x, 2.0)(bias=1.0)
            return y.relu()
    """
    assert_rewrites(CallThroughPartial, before, after, seed=4)


def test_wraps_decorator_counts_in_a_closure_cell():
    before = """
        import torch

        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    after = """
        import torch
        import functools

        WRAPPER_CALLS = {}


        def counted(func):
            count = 0

            @functools.wraps(func)
            def wrapper(*args, **kwargs):
                nonlocal count
                count += 1
                WRAPPER_CALLS[func.__qualname__] = count
                return func(*args, **kwargs)

            return wrapper


        @counted
        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    assert_rewrites(WrapsDecorator, before, after, seed=1)


def test_wraps_decorator_factory_on_the_entry():
    before = """
        import torch

        def scale(x, k, bias=0.0):
            return x * k + bias

        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    after = """
        import torch
        import functools

        WRAPPER_CALLS = {}


        def counted(tag):
            def decorate(func):
                calls = [0]

                @functools.wraps(func)
                def wrapper(*args, **kwargs):
                    calls[0] += 1
                    WRAPPER_CALLS[tag + func.__name__] = calls[0]
                    return func(*args, **kwargs)

                return wrapper
            return decorate


        def scale(x, k, bias=0.0):
            return x * k + bias

        @counted("a:")
        def fn(x):
            y = scale(x, 2.0, bias=1.0)
            return y.relu()
    """
    assert_rewrites(WrapsDecorator, before, after, seed=0)


def test_extract_to_closure_declines_literals_walrus_and_frame_bound_calls():
    before = """
        import torch

        def fn(x):
            n = 0
            out = (n := x.sum())
            return locals()
    """
    assert_declines(ExtractToClosure, before, "no site for extract_to_closure in the region")


@pytest.mark.parametrize("op", [NonlocalCell, SharedCellFactory])


def test_cell_operators_decline_without_a_value_statement_in_a_function(op):
    assert_declines(op, NO_VALUE_STATEMENT, f"no site for {op.name} in the region")


def test_call_through_partial_leaves_decorators_and_partials_alone():
    before = """
        import functools

        @functools.lru_cache(maxsize=None)
        def fn(x):
            return functools.partial(max, x)
    """
    assert_declines(CallThroughPartial, before, "no site for call_through_partial in the region")


def test_wraps_decorator_declines_without_a_compiled_function():
    before = """
        import torch

        class M(torch.nn.Module):
            pass

        fn = M()
    """
    assert_declines(WrapsDecorator, before, "no site for wraps_decorator in the region")
