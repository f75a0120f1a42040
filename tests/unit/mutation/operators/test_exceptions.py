"""Before/after and decline tests for the E2 (exception handling) operators."""

import pytest

from mutator.mutation.operators.exceptions import (
    CatchBuiltinError,
    ExceptionAcrossGraphBreak,
    RaiseAndCatch,
    RaiseFromChain,
    WrapInTry,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites

NO_VALUE_STATEMENT = """
    import torch

    def fn(x):
        class Local:
            scale = 2.0  # a class body is not the function's own block
        x.add_(Local.scale)
"""


def test_wrap_in_try_with_else_and_finally():
    before = """
        import torch

        def fn(x):
            y = x.cos()
            return y * 2, y
    """
    after = """
        import torch

        TRY_LOG = {}


        def fn(x):
            try:
                y = x.cos()
            except Exception as err:
                TRY_LOG[type(err).__name__] = True
                raise
            else:
                TRY_LOG['else'] = True
            finally:
                TRY_LOG['finally'] = True
            return y * 2, y
    """
    assert_rewrites(WrapInTry, before, after, seed=23)


def test_wrap_in_try_reraises_by_name():
    before = """
        import torch

        def fn(x):
            y = x.cos()
            return y * 2, y
    """
    after = """
        import torch

        TRY_LOG = {}


        def fn(x):
            try:
                y = x.cos()
            except Exception as err:
                TRY_LOG['reraised'] = True
                raise err
            else:
                TRY_LOG['else'] = len(TRY_LOG)
            return y * 2, y
    """
    assert_rewrites(WrapInTry, before, after, seed=22)


def test_wrap_in_try_uses_no_else_after_a_return():
    before = """
        import torch

        def fn(x):
            y = x.cos()
            return y * 2, y
    """
    after = """
        import torch

        TRY_LOG = {}


        def fn(x):
            try:
                y = x.cos()
                return y * 2, y
            finally:
                TRY_LOG['finally'] = True
    """
    assert_rewrites(WrapInTry, before, after, seed=1)


def test_raise_and_catch_keeps_a_tuple_one_value():
    before = """
        import torch

        def fn(x):
            y = x.cos()
            return y * 2, y
    """
    after = """
        import torch

        def fn(x):
            y = x.cos()
            try:
                raise ValueError((y * 2, y))
            except ValueError as err:
                return err.args[0]
    """
    assert_rewrites(RaiseAndCatch, before, after, seed=0)


def test_raise_and_catch_raises_one_frame_down():
    before = """
        import torch

        def fn(x):
            y = x.cos()
            return y * 2, y
    """
    after = """
        import torch


        class Carrier(Exception):
            def __init__(self, payload, note="carried"):
                super().__init__(note)
                self.payload = payload


        def throw(value):
            raise Carrier(value)


        def fn(x):
            try:
                throw(x.cos())
            except Carrier as err:
                y = err.payload
            return y * 2, y
    """
    assert_rewrites(RaiseAndCatch, before, after, seed=1)


def test_raise_and_catch_catches_through_a_tuple():
    before = """
        import torch

        def fn(x):
            y = x.cos()
            return y * 2, y
    """
    after = """
        import torch


        class Carrier(Exception):
            def __init__(self, payload, note="carried"):
                super().__init__(note)
                self.payload = payload


        def fn(x):
            try:
                raise Carrier(x.cos())
            except (KeyError, Carrier) as err:
                y = err.payload
            return y * 2, y
    """
    assert_rewrites(RaiseAndCatch, before, after, seed=4)


def test_raise_from_reads_the_cause():
    before = """
        import torch

        def fn(x):
            y = x.cos()
            return y * 2, y
    """
    after = """
        import torch


        class Carrier(Exception):
            def __init__(self, payload, note="carried"):
                super().__init__(note)
                self.payload = payload


        class StageError(RuntimeError):
            pass


        def fn(x):
            try:
                try:
                    raise Carrier(x.cos())
                except Carrier as e:
                    raise StageError("stage failed") from e
            except StageError as err:
                y = err.__cause__.payload
            return y * 2, y
    """
    assert_rewrites(RaiseFromChain, before, after, seed=2)


def test_implicit_chaining_reads_the_context():
    before = """
        import torch

        def fn(x):
            y = x.cos()
            return y * 2, y
    """
    after = """
        import torch


        class Carrier(Exception):
            def __init__(self, payload, note="carried"):
                super().__init__(note)
                self.payload = payload


        class StageError(RuntimeError):
            pass


        def fn(x):
            y = x.cos()
            try:
                try:
                    raise Carrier((y * 2, y))
                except Carrier as e:
                    raise StageError("stage failed")
            except StageError as err:
                return err.__context__.payload
    """
    assert_rewrites(RaiseFromChain, before, after, seed=0)


def test_graph_break_before_the_raise():
    before = """
        import torch

        def fn(x):
            y = x.cos()
            return y * 2, y
    """
    after = """
        import torch


        class Carrier(Exception):
            def __init__(self, payload, note="carried"):
                super().__init__(note)
                self.payload = payload


        def fn(x):
            try:
                value = x.cos()
                torch._dynamo.graph_break()
                raise Carrier(value)
            except Carrier as err:
                y = err.payload
            return y * 2, y
    """
    assert_rewrites(ExceptionAcrossGraphBreak, before, after, seed=1)


def test_graph_break_in_the_raising_helper():
    before = """
        import torch

        def fn(x):
            y = x.cos()
            return y * 2, y
    """
    after = """
        import torch


        class Carrier(Exception):
            def __init__(self, payload, note="carried"):
                super().__init__(note)
                self.payload = payload


        def throw_after_break(value):
            torch._dynamo.graph_break()
            raise Carrier(value)


        def fn(x):
            try:
                throw_after_break(x.cos())
            except Carrier as err:
                y = err.payload
            return y * 2, y
    """
    assert_rewrites(ExceptionAcrossGraphBreak, before, after, seed=3)


def test_graph_break_in_finally():
    before = """
        import torch

        def fn(x):
            y = x.cos()
            return y * 2, y
    """
    after = """
        import torch


        class Carrier(Exception):
            def __init__(self, payload, note="carried"):
                super().__init__(note)
                self.payload = payload


        FINALLY_LOG = {}


        def fn(x):
            y = x.cos()
            try:
                raise Carrier((y * 2, y))
            except Carrier as err:
                return err.payload
            finally:
                torch._dynamo.graph_break()
                FINALLY_LOG['finally'] = True
    """
    assert_rewrites(ExceptionAcrossGraphBreak, before, after, seed=0)


def test_catch_stop_iteration_keeps_the_first_item():
    before = """
        import torch

        def fn(x):
            y = x.cos()
            return y * 2, y
    """
    after = """
        import torch

        CAUGHT = {}


        def fn(x):
            y = x.cos()
            box = iter([(y * 2, y)])
            first = next(box)
            try:
                return next(box)
            except StopIteration as err:
                CAUGHT[type(err).__name__] = True
                return first
    """
    assert_rewrites(CatchBuiltinError, before, after, seed=0)


def test_catch_attribute_error_on_a_missing_attribute():
    before = """
        import torch

        def fn(x):
            y = x.cos()
            return y * 2, y
    """
    after = """
        import torch

        CAUGHT = {}


        def fn(x):
            box = x.cos()
            try:
                y = box.missing_attribute
            except AttributeError as err:
                CAUGHT[type(err).__name__] = True
                y = box
            return y * 2, y
    """
    assert_rewrites(CatchBuiltinError, before, after, seed=1)


def test_catch_key_error():
    before = """
        import torch

        def fn(x):
            y = x.cos()
            return y * 2, y
    """
    after = """
        import torch

        CAUGHT = {}


        def fn(x):
            box = {'value': x.cos()}
            try:
                y = box['other']
            except LookupError as err:
                CAUGHT[type(err).__name__] = True
                y = box['value']
            return y * 2, y
    """
    assert_rewrites(CatchBuiltinError, before, after, seed=3)


def test_wrap_in_try_declines_without_movable_statements():
    before = """
        import torch

        COUNT = 0

        def fn(x):
            '''Only a docstring and a declaration.'''
            global COUNT
    """
    assert_declines(WrapInTry, before, "no site for wrap_in_try in the region")


@pytest.mark.parametrize("op", [RaiseAndCatch, RaiseFromChain, ExceptionAcrossGraphBreak, CatchBuiltinError])


def test_value_operators_decline_without_a_value_statement_in_a_function(op):
    assert_declines(op, NO_VALUE_STATEMENT, f"no site for {op.name} in the region")


def test_operators_decline_in_functions_that_rebind_a_builtin_of_their_templates():
    before = """
        import torch

        def fn(x, len=2, type="sum"):
            y = x[:len]
            return y.sum() if type == "sum" else y.mean()
    """
    assert_declines(WrapInTry, before, "no site for wrap_in_try in the region")
    assert_declines(CatchBuiltinError, before, "no site for catch_builtin_error in the region")
