from mutator.mutation.operators.others import (
    ClassDictRead,
    FormatRoundTrip,
    IdIdentityMap,
    IsToIdCompare,
    KeywordNamedKwargs,
    MappingProxyView,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites

# -- O.keyword_named_kwargs ---------------------------------------------------------------------


def test_passes_arguments_as_keyword_named_keys_and_keeps_other_keywords():
    before = """
        import torch

        def fn(x, w):
            return torch.add(x, w, alpha=2)
    """
    after = """
        import torch


        def call_with_keywords(callee, /, **kw):
            return callee(kw.pop("del"), kw.pop("class"), **kw)


        def fn(x, w):
            return call_with_keywords(torch.add, **{"del": x, "class": w}, alpha=2)
    """
    assert_rewrites(KeywordNamedKwargs, before, after, seed=1)


def test_mixes_builtin_named_keyword_only_parameters_with_keyword_keys():
    before = """
        import torch

        def fn(x, w):
            return torch.where(x > 0, x, w)
    """
    after = """
        import torch


        def call_with_keywords(callee, /, *, hash, **kw):
            return callee(hash, kw["raise"], kw["in"])


        def fn(x, w):
            return call_with_keywords(torch.where, hash=(x > 0), **{"raise": x, "in": w})
    """
    assert_rewrites(KeywordNamedKwargs, before, after, seed=3)


def test_keyword_named_kwargs_declines_star_arguments():
    before = """
        import torch

        def fn(x, *rest):
            return torch.stack(*rest) + x.sum()
    """
    assert_declines(KeywordNamedKwargs, before, "no site for keyword_named_kwargs")


# -- O.is_to_id_compare -------------------------------------------------------------------------

IS_NONE = """
    import torch

    def fn(x, mask):
        if mask is None:
            return x
        return x * mask
"""


def test_rewrites_is_as_id_equality():
    assert_rewrites(IsToIdCompare, IS_NONE, IS_NONE.replace("mask is None", "id(mask) == id(None)"), seed=2)


def test_rewrites_is_as_id_set_membership():
    assert_rewrites(IsToIdCompare, IS_NONE, IS_NONE.replace("mask is None", "id(mask) in {id(None)}"), seed=0)


def test_is_to_id_declines_when_id_is_shadowed():
    before = """
        import torch

        def fn(x, mask, id=0):
            return x if mask is None else x * mask + id
    """
    assert_declines(IsToIdCompare, before, "no site for is_to_id_compare")


# -- O.id_identity_map --------------------------------------------------------------------------

def test_routes_a_local_through_an_id_keyed_dict():
    before = """
        import torch

        def fn(x, w):
            h = x * w
            return h.sum()
    """
    after = """
        import torch

        def fn(x, w):
            h = x * w
            h = {id(w): w, id(h): h}[id(h)]
            return h.sum()
    """
    assert_rewrites(IdIdentityMap, before, after, seed=0)


def test_routes_a_local_through_an_identity_search():
    before = """
        import torch

        def fn(x, w):
            h = x * w
            return h.sum()
    """
    after = """
        import torch

        def fn(x, w):
            h = x * w
            h = next(obj for obj in (x, h) if id(obj) == id(h))
            return h.sum()
    """
    assert_rewrites(IdIdentityMap, before, after, seed=1)


def test_id_identity_map_declines_values_nobody_reads_later():
    before = """
        import torch

        def fn(x):
            h = x * 2
            return x
    """
    assert_declines(IdIdentityMap, before, "no site for id_identity_map")


# -- O.format_round_trip ------------------------------------------------------------------------

RESHAPE = """
    import torch

    def fn(x):
        return x.reshape(2, x.shape[0] // 2) * 0.5
"""


def test_round_trips_an_int_literal_through_an_f_string_spec():
    after = RESHAPE.replace("x.reshape(2,", 'x.reshape(int(f"{(2):d}"),')
    assert_rewrites(FormatRoundTrip, RESHAPE, after, seed=2)


def test_round_trips_an_int_through_str_format_in_octal():
    after = RESHAPE.replace("// 2)", '// int("{0:o}".format(2), 8))')
    assert_rewrites(FormatRoundTrip, RESHAPE, after, seed=0)


def test_round_trips_a_shape_and_a_float():
    before = """
        import torch

        def fn(x):
            return x.new_ones(x.shape[0]) * 1.5
    """
    after = """
        import torch

        def fn(x):
            return x.new_ones(x.shape[0]) * float(f"{(1.5):.17g}")
    """
    assert_rewrites(FormatRoundTrip, before, after, seed=6)
    after = """
        import torch

        def fn(x):
            return x.new_ones(int(f"{(x.shape[0]):+05d}")) * 1.5
    """
    assert_rewrites(FormatRoundTrip, before, after, seed=7)


def test_format_round_trip_declines_inside_f_strings_and_when_int_is_shadowed():
    before = """
        import torch

        def fn(x, int=None):
            return x.sum(), f"{x.dim():02d}"
    """
    assert_declines(FormatRoundTrip, before, "no site for format_round_trip")


# -- O.mappingproxy_view ------------------------------------------------------------------------

OPTIONS = """
    import torch

    def fn(x):
        opts = {"scale": 2.0, "shift": 1.0}
        return x * opts["scale"] + opts.get("shift", 0.0)
"""


def test_reads_a_local_dict_item_through_a_mappingproxy():
    after = """
        import torch
        import types

        def fn(x):
            opts = {"scale": 2.0, "shift": 1.0}
            return x * types.MappingProxyType(opts)["scale"] + opts.get("shift", 0.0)
    """
    assert_rewrites(MappingProxyView, OPTIONS, after, seed=1)


def test_calls_get_through_a_mappingproxy_of_a_global_dict():
    before = """
        import torch
        import types

        TABLE = {"gain": 1.5}

        def fn(x):
            return x * TABLE.get("gain", 1.0)
    """
    after = """
        import torch
        import types

        TABLE = {"gain": 1.5}

        def fn(x):
            return x * types.MappingProxyType(TABLE).get("gain", 1.0)
    """
    assert_rewrites(MappingProxyView, before, after, seed=0)


def test_mappingproxy_view_declines_writes_and_values_not_known_to_be_dicts():
    before = """
        import torch

        def fn(x, opts):
            cache = {}
            cache["y"] = x * opts["scale"]
            return cache
    """
    assert_declines(MappingProxyView, before, "no site for mappingproxy_view")


# -- O.class_dict_read --------------------------------------------------------------------------

CLASS_ATTR = """
    import torch

    class Cfg:
        depth = 2

    def fn(x):
        for _ in range(Cfg.depth):
            x = x.relu()
        return x
"""


def test_reads_a_class_attribute_from_the_class_dict():
    assert_rewrites(ClassDictRead, CLASS_ATTR, CLASS_ATTR.replace("Cfg.depth", 'Cfg.__dict__.get("depth")'), seed=3)


def test_reads_a_class_attribute_of_self_through_a_mappingproxy():
    before = """
        import torch

        class M(torch.nn.Module):
            gain = 0.5

            def forward(self, x):
                return x * self.gain

        fn = M()
    """
    after = """
        import torch
        import types

        class M(torch.nn.Module):
            gain = 0.5

            def forward(self, x):
                return x * types.MappingProxyType(M.__dict__)["gain"]

        fn = M()
    """
    assert_rewrites(ClassDictRead, before, after, seed=0)


def test_class_dict_read_declines_attributes_an_instance_may_shadow():
    before = """
        import torch

        class M(torch.nn.Module):
            gain = 0.5

            def forward(self, x):
                return x * self.gain

        fn = M()
        fn.gain = 2.0
    """
    assert_declines(ClassDictRead, before, "no site for class_dict_read")
