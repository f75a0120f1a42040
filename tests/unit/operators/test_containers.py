from mutator.mutation.operators.containers import (
    ComprehensionSideEffect,
    ContainerSubclass,
    KwargsViaMapping,
    MethodSibling,
    MutateWhileIterating,
    RebuildFromIterator,
    SpecialisedMapping,
    ThroughDictView,
    TupleToNamedtuple,
    ViewAndSetAlgebra,
)

from tests.unit.operators.helpers import assert_declines, assert_rewrites

# -- B1 ------------------------------------------------------------------------------------------


def test_container_subclass_builds_a_list_as_a_subclass_with_a_mixin():
    before = """
        import torch

        def fn(x):
            parts = [x, x + 1]
            return torch.stack(parts)
    """
    after = """
        import torch
        class ContainerMixin:
            def __iter__(self):
                return super().__iter__()
        class ListSubclass(ContainerMixin, list):
            pass

        def fn(x):
            parts = ListSubclass([x, x + 1])
            return torch.stack(parts)
    """
    assert_rewrites(ContainerSubclass, before, after, seed=2)


def test_container_subclass_wraps_a_bare_returned_tuple():
    before = """
        import torch

        def fn(x):
            return x, x + 1
    """
    after = """
        import torch
        class TupleSubclass(tuple):
            def __getitem__(self, index):
                return super().__getitem__(index)

            def __new__(cls, items=()):
                return super().__new__(cls, items)

        def fn(x):
            return TupleSubclass((x, x + 1))
    """
    assert_rewrites(ContainerSubclass, before, after, seed=4)


def test_container_subclass_leaves_targets_and_indices_alone():
    before = """
        import torch

        def fn(x):
            a, b = x
            return x[(0, 1)] + a
    """
    assert_declines(ContainerSubclass, before, "no site for container_subclass in the region")


def test_specialised_mapping_turns_a_dict_display_into_a_defaultdict():
    before = """
        import torch

        def fn(x):
            scales = {"a": 0.5, "b": 2.0}
            return x * scales["a"] + x * scales["b"]
    """
    after = """
        import torch
        import collections

        def fn(x):
            scales = collections.defaultdict(int, {"a": 0.5, "b": 2.0})
            return x * scales["a"] + x * scales["b"]
    """
    assert_rewrites(SpecialisedMapping, before, after, seed=3)


def test_specialised_mapping_declines_without_a_dict():
    before = """
        import torch

        def fn(x):
            return [x, x]
    """
    assert_declines(SpecialisedMapping, before, "no site for specialised_mapping in the region")


def test_tuple_to_namedtuple_returns_a_namedtuple_subclass():
    before = """
        import torch

        def fn(x):
            return x.sin(), x.cos()
    """
    after = """
        import torch
        import collections
        class Record(collections.namedtuple('RecordBase', ['item0', 'item1'])):
            __slots__ = ()

        def fn(x):
            return Record._make((x.sin(), x.cos()))
    """
    assert_rewrites(TupleToNamedtuple, before, after, seed=3)


def test_tuple_to_namedtuple_declines_on_starred_tuples():
    before = """
        import torch

        def fn(x):
            return (*x,)
    """
    assert_declines(TupleToNamedtuple, before, "no site for tuple_to_namedtuple in the region")


def test_through_dict_view_reads_a_return_value_back_through_keys_set_algebra():
    before = """
        import torch

        def fn(x):
            return x.sin() * 2
    """
    after = """
        import torch
        import collections
        def read_back(box):
            (key,) = box.keys() - {'decoy'}
            return box[key]

        def fn(x):
            return read_back(collections.OrderedDict(value=x.sin() * 2, decoy=None))
    """
    assert_rewrites(ThroughDictView, before, after, seed=3)


def test_through_dict_view_declines_without_values():
    before = """
        import torch

        def fn(x):
            x.add_(1)
            return
    """
    assert_declines(ThroughDictView, before, "no site for through_dict_view in the region")


VIEWS = """
    import torch

    def fn(x, table, names):
        for k, v in table.items():
            x = x + v
        return x, set(names) - table.keys()
"""


def test_view_and_set_algebra_iterates_items_as_a_zip_of_views():
    after = """
        import torch

        def fn(x, table, names):
            for k, v in zip(table.keys(), table.values()):
                x = x + v
            return x, set(names) - table.keys()
    """
    assert_rewrites(ViewAndSetAlgebra, VIEWS, after, seed=2)


def test_view_and_set_algebra_spells_an_operator_as_a_set_method():
    after = """
        import torch

        def fn(x, table, names):
            for k, v in table.items():
                x = x + v
            return x, set(names).difference(table.keys())
    """
    assert_rewrites(ViewAndSetAlgebra, VIEWS, after, seed=0)


def test_view_and_set_algebra_leaves_stored_views_and_bitwise_ops_alone():
    before = """
        import torch

        def fn(x, table):
            ks = table.keys()
            return x & (x | 1), len(ks)
    """
    assert_declines(ViewAndSetAlgebra, before, "no site for view_and_set_algebra in the region")


# -- B2 ------------------------------------------------------------------------------------------


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
