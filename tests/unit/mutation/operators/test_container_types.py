"""Before/after and decline tests for the B1 (container types) operators."""

from mutator.mutation.operators.container_types import (
    ContainerSubclass,
    SpecialisedMapping,
    ThroughDictView,
    TupleToNamedtuple,
    ViewAndSetAlgebra,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites


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
