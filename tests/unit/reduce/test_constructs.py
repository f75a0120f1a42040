"""The constructs of a reduced program and the variants "what matters" asks of them."""

from __future__ import annotations

import textwrap

from mutator.reduce import constructs
from mutator.reduce.constructs import probes


def changes(source: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for probe in probes(textwrap.dedent(source)):
        compile(probe.source, "<probe>", "exec")  # every variant is a program
        out.setdefault(probe.construct, []).append(probe.change)
    return out


def test_a_container_subclass_gets_its_sibling_and_the_plain_container():
    got = changes('''
        import torch
        class Tags(set):
            pass
        def fn(x):
            t = Tags(i for i in range(3) if i)
            torch._dynamo.graph_break()
            return x + len(t)
        def inputs():
            return torch.ones(1)
    ''')
    assert got["a `set` subclass"] == ["as a `frozenset` subclass", "as a plain `set` (`Tags = set`)"]
    assert got["a graph break"] == ["without the graph break"]
    assert got["a generator expression"] == ["with a list comprehension instead"]
    assert got["the generator's filter"] == ["without the `if` filter"]


def test_removals_keep_a_body_and_variants_leave_the_rest_alone():
    source = textwrap.dedent('''
        import torch
        def fn(x):
            torch._dynamo.graph_break()
        def inputs():
            return torch.ones(1)
    ''')
    [probe] = probes(source)
    assert "def fn(x):\n    pass\n" in probe.source and "def inputs():\n    return torch.ones(1)" in probe.source


def test_compile_options_decorators_contexts_transforms_and_format_specs():
    got = changes('''
        import functools
        import torch
        COMPILE_KWARGS = {"dynamic": True, "backend": "eager"}
        def deco(g):
            @functools.wraps(g)
            def inner(*a):
                return g(*a)
            return inner
        @deco
        def helper(row):
            return row * len(f"{row.shape[0]:d}")
        def fn(x):
            with torch.no_grad():
                y = torch.func.vmap(helper)(x)
            return torch.utils.checkpoint.checkpoint(helper, y, use_reentrant=False)
        def inputs():
            return torch.ones(2, 2)
    ''')
    assert got["`dynamic=True`"] == ["without `dynamic=` (its default)", "with `dynamic=False`"]
    assert "`backend=\"eager\"`" not in got  # the ablation answers for the backend
    assert got["`@functools.wraps`"] == ["without `@functools.wraps`"] and got["`@deco`"] == ["without `@deco`"]
    assert got["a `torch.no_grad` block"][0] == "without the `torch.no_grad` block"
    assert "with `torch.enable_grad()` instead" in got["a `torch.no_grad` block"]
    assert got["`torch.func.vmap`"] == ["without `torch.func.vmap` (the function called directly)"]
    assert got["`torch.utils.checkpoint.checkpoint`"] == [
        "without `torch.utils.checkpoint.checkpoint` (the function called directly)"]
    assert got["the format spec `:d`"] == ["without it (`{row.shape[0]}`)"]


def test_a_closure_cell_moves_to_module_level():
    [probe] = [p for p in probes(textwrap.dedent('''
        def counted(init):
            seen = {"calls": 0}
            def wrapper(self):
                seen["calls"] += 1
                init(self)
            return wrapper
    ''')) if p.construct == "a `dict` held in a closure"]
    assert probe.source.index('seen = {"calls": 0}') < probe.source.index("def counted")


def test_handlers_builtin_format_and_methods():
    got = changes('''
        import torch
        class Router(torch.nn.Module):
            def forward(self, x):
                try:
                    y = torch.cat([x, x])
                except RuntimeError:
                    y = x
                return y, format(1, "03d")
        fn = Router()
    ''')
    assert got["a `try`/`except RuntimeError`"] == ["without the `try` (its body alone)",
                                                      "catching `Exception` instead of `RuntimeError`"]
    assert got["`format`"] == ["with an f-string `{...:03d}` instead of `format`"]
    assert got["the format spec `:03d`"] == ["with `str(...)` instead (no spec)"]
    assert got["`Router.forward`"] == ["without `Router.forward`"]
    assert "base `torch.nn.Module`" not in got  # a Module without its base is no Module: nothing to learn


def test_constructs_the_reduction_took_out_are_named_like_the_ones_left():
    original = textwrap.dedent('''
        import torch
        def fn(x):
            y = torch.func.vmap(lambda r: r * 2)(x)
            torch._dynamo.graph_break()
            return y
    ''')
    reduced = original.replace("torch.func.vmap(lambda r: r * 2)(x)", "x * 2")
    assert [c for c in constructs.constructs(original) if c not in constructs.constructs(reduced)] == ["`torch.func.vmap`"]


def test_vars_and_hasattr_get_their_spelled_out_neighbours():
    got = changes('''
        def fn(x, names):
            params = {n: x for n in names}
            return hasattr(params, "__dict__") and "values" in vars(params)
    ''')
    assert got["`hasattr`"] == ['with `"__dict__" in dir(...)` instead of `hasattr`']
    assert got["`vars`"] == ["with `.__dict__` instead of `vars`"]


def test_the_environment_becomes_a_plain_dict_and_getattr_names_its_attribute():
    [probe] = [p for p in probes(textwrap.dedent('''
        import os
        import torch
        def fn(x):
            return x + 1 if os.environ.get("KNOB") else x
        def drive(f):
            f(torch.ones(1))
            os.environ["KNOB"] = "on"
            return f(torch.ones(1))
    ''')) if p.construct == "`os.environ`"]
    assert "ENVIRON_AS_DICT = {}" in probe.source and "os.environ.get" not in probe.source
    assert 'ENVIRON_AS_DICT["KNOB"] = "on"' in probe.source
    compile(probe.source, "<probe>", "exec")
    got = changes('''
        def fn(x):
            return getattr(x, "__dict__")
    ''')
    assert got["`getattr(..., '__dict__')`"] == ["with `.__dict__` instead of `getattr`"]


def test_construct_names_name_what_probes_would_without_building_a_variant():
    source = textwrap.dedent('''
        import os
        import torch
        class Router(torch.nn.Module):
            def forward(self, x):
                try:
                    y = torch.cat([x, x])
                except RuntimeError:
                    y = x
                with torch.no_grad():
                    z = getattr(self, "training")
                torch._dynamo.graph_break()
                return y, format(1, "03d"), f"{z!r}", os.environ.get("HOME")
        def counted(init):
            seen = {"calls": 0}
            def wrapper(self):
                seen["calls"] += 1
                init(self)
            return wrapper
        fn = Router()
    ''')
    named = constructs.construct_names(source)
    assert set(named) == set(constructs.constructs(source)) and len(named) == len(set(named))
    assert {"a `dict` held in a closure", "`os.environ`", "a graph break", "a `torch.no_grad` block"} <= set(named)
    assert probes(source)[0].source != ""  # names only while naming: the variants are built again after
    assert constructs.construct_names("def broken(:\n") == []
