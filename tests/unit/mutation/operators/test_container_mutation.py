"""Before/after and decline tests for the B2 (container mutation) operators."""

from mutator.mutation.operators.container_mutation import (
    ComprehensionSideEffect,
    KwargsViaMapping,
    MethodSibling,
    MutateWhileIterating,
    RebuildFromIterator,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites


def test_method_sibling_appends_through_iadd_only_as_a_statement():
    before = """
        import torch

        def fn(x):
            out = []
            out.append(x.sin())
            return out
    """
    after = """
        import torch

        def fn(x):
            out = []
            out.__iadd__([x.sin()])
            return out
    """
    assert_rewrites(MethodSibling, before, after, seed=0)


def test_method_sibling_reads_get_with_default_through_items():
    before = """
        import torch

        def fn(x, table):
            w = table.get("w", 1.0)
            return x * w
    """
    after = """
        import torch

        def fn(x, table):
            w = next((item for key, item in table.items() if key == "w"), 1.0)
            return x * w
    """
    assert_rewrites(MethodSibling, before, after, seed=0)


def test_method_sibling_declines_on_unknown_shapes():
    before = """
        import torch

        def fn(x, stack):
            top = stack.pop()
            stack.append(1, 2)
            return x * top
    """
    assert_declines(MethodSibling, before, "no site for method_sibling in the region")


def test_kwargs_via_mapping_unpacks_a_custom_mapping():
    before = """
        import torch

        def fn(x):
            return x.sum(dim=0, keepdim=True)
    """
    after = '''
        import torch
        import collections.abc


        class KwargMapping(collections.abc.Mapping):
            """A read-only mapping that is not a dict: `**` must go through keys() and __getitem__."""

            def __init__(self, **entries):
                self._entries = entries

            def __getitem__(self, key):
                return self._entries[key]

            def __iter__(self):
                return iter(self._entries)

            def __len__(self):
                return len(self._entries)


        def fn(x):
            return x.sum(**KwargMapping(dim=0, keepdim=True))
    '''
    assert_rewrites(KwargsViaMapping, before, after, seed=2)


def test_kwargs_via_mapping_keeps_star_args_before_the_mapping():
    before = """
        import torch

        def fn(x, dims):
            return x.sum(*dims, keepdim=True)
    """
    after = """
        import torch
        import types

        def fn(x, dims):
            return x.sum(*dims, **types.MappingProxyType({'keepdim': True}))
    """
    assert_rewrites(KwargsViaMapping, before, after, seed=0)


def test_kwargs_via_mapping_declines_without_keywords():
    before = """
        import torch

        def fn(x):
            return x.sum(0)
    """
    assert_declines(KwargsViaMapping, before, "no site for kwargs_via_mapping in the region")


def test_comprehension_side_effect_records_loop_variables_in_the_filter():
    before = """
        import torch

        def fn(xs):
            return [x * 2 for x in xs]
    """
    after = """
        import torch

        TRACE = []


        def fn(xs):
            return [x * 2 for x in xs if TRACE.append(x) is None]
    """
    assert_rewrites(ComprehensionSideEffect, before, after, seed=0)


def test_comprehension_side_effect_records_into_a_dict_in_the_element():
    before = """
        import torch

        def fn(xs):
            return [x * 2 for x in xs]
    """
    after = """
        import torch

        TRACE = {}


        def fn(xs):
            return [(TRACE.setdefault(len(TRACE), x), (x * 2))[1] for x in xs]
    """
    assert_rewrites(ComprehensionSideEffect, before, after, seed=3)


def test_comprehension_side_effect_declines_without_comprehensions():
    before = """
        import torch

        def fn(x):
            return x + 1
    """
    assert_declines(ComprehensionSideEffect, before, "no site for comprehension_side_effect in the region")


def test_rebuild_from_iterator_fills_a_dict_from_a_generator():
    before = """
        import torch

        def fn(x):
            parts = {"a": x, "b": x + 1}
            return parts["a"] - parts["b"]
    """
    after = """
        import torch

        def fn(x):
            parts = {}
            parts.update((key, item) for key, item in (("a", x), ("b", x + 1)))
            return parts["a"] - parts["b"]
    """
    assert_rewrites(RebuildFromIterator, before, after, seed=0)


def test_rebuild_from_iterator_declines_on_self_reference_and_empty_displays():
    before = """
        import torch

        def fn(x, xs):
            out = []
            xs = [xs[0], x]
            return xs, out
    """
    assert_declines(RebuildFromIterator, before, "no site for rebuild_from_iterator in the region")


def test_mutate_while_iterating_rotates_the_original_during_the_loop():
    before = """
        import torch

        def fn(x, weights):
            for w in weights:
                x = x * w
            return x
    """
    after = '''
        import torch


        def rotate_in_place(container):
            """Move the first item or key to the end."""
            if isinstance(container, list) and container:
                container.append(container.pop(0))
            elif isinstance(container, dict) and container:
                key = next(iter(container))
                container[key] = container.pop(key)


        def fn(x, weights):
            for w in tuple(weights):
                rotate_in_place(weights)
                x = x * w
            return x
    '''
    assert_rewrites(MutateWhileIterating, before, after, seed=2)


def test_mutate_while_iterating_needs_a_named_container():
    before = """
        import torch

        def fn(x):
            for i in range(3):
                x = x * i
            return x
    """
    assert_declines(MutateWhileIterating, before, "no site for mutate_while_iterating in the region")
