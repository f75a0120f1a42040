"""Reduction passes, before and after (the first candidates each pass proposes)."""

import textwrap

import libcst as cst

from mutator.reduce.passes import (PASSES, delete_statements, drop_unused, fewer_parts, inline_helpers, inline_names,
    lift_blocks, node_pass, remove_harness_argument, remove_parameter_everywhere, simpler_expressions, smaller_literals,
    strip_comments)


def candidates(run, source: str) -> list[str]:
    return [module.code for module in run(cst.parse_module(textwrap.dedent(source)))]


def code(source: str) -> str:
    return textwrap.dedent(source)


def test_delete_statements_tries_big_chunks_first_and_leaves_pass_in_empty_bodies():
    found = candidates(delete_statements, """\
        import math
        def f(x):
            y = x + 1
            return y
        z = 1
        """)
    assert found[0].strip() == ""  # the whole module first
    assert code("""\
        import math
        def f(x):
            pass
        z = 1
        """) in found
    assert code("""\
        def f(x):
            y = x + 1
            return y
        z = 1
        """) in found
    assert found.index(found[0]) < found.index(code("""\
        def f(x):
            y = x + 1
            return y
        z = 1
        """))


def test_delete_statements_covers_docstrings_definitions_and_methods():
    source = '''\
        class A:
            """Doc."""
            def helper(self):
                return 1
            def forward(self, x):
                return x
        '''
    found = candidates(delete_statements, source)
    assert code('''\
        class A:
            def helper(self):
                return 1
            def forward(self, x):
                return x
        ''') in found
    assert code('''\
        class A:
            """Doc."""
            def forward(self, x):
                return x
        ''') in found


def test_lift_blocks_offers_every_body_of_if_try_and_loops():
    found = candidates(lift_blocks, """\
        if c:
            a = 1
        else:
            a = 2
        try:
            b = 1
        except ValueError:
            b = 2
        finally:
            d = 3
        """)
    assert code("""\
        a = 1
        try:
            b = 1
        except ValueError:
            b = 2
        finally:
            d = 3
        """) in found
    assert any(candidate.startswith("a = 2\n") for candidate in found)
    assert any(candidate.endswith("else:\n    a = 2\nb = 2\n") for candidate in found)
    assert any(candidate.endswith("else:\n    a = 2\nd = 3\n") for candidate in found)


def test_lift_blocks_of_with_and_for():
    found = candidates(lift_blocks, """\
        def f(x):
            with torch.no_grad():
                for i in range(3):
                    x = x + i
            return x
        """)
    assert code("""\
        def f(x):
            for i in range(3):
                x = x + i
            return x
        """) in found
    assert code("""\
        def f(x):
            with torch.no_grad():
                x = x + i
            return x
        """) in found


def test_fewer_parts_drops_arguments_parameters_bases_and_decorators():
    found = candidates(node_pass(fewer_parts), """\
        @torch.no_grad()
        def f(x, y):
            return g(x, scale=2)
        class A(Base, Mixin):
            pass
        """)
    assert code("""\
        @torch.no_grad()
        def f(x, y):
            return g(scale=2)
        class A(Base, Mixin):
            pass
        """) in found
    assert code("""\
        @torch.no_grad()
        def f(x, y):
            return g(x)
        class A(Base, Mixin):
            pass
        """) in found
    assert any("def f(x):" in candidate for candidate in found)
    assert any(candidate.startswith("def f(x, y):") for candidate in found)
    assert any("class A(Base):" in candidate for candidate in found)
    assert any("class A(Mixin):" in candidate for candidate in found)


def test_a_class_without_its_only_base_loses_the_parentheses():
    found = candidates(node_pass(fewer_parts), "class A(Base):\n    pass\n")
    assert "class A:\n    pass\n" in found


def test_simpler_expressions_offer_parts_none_and_a_constant():
    found = candidates(node_pass(simpler_expressions), "y = torch.relu(x) * 2 + h.sum()\n")
    assert "y = torch.relu(x) * 2\n" in found
    assert "y = h.sum()\n" in found
    assert "y = x * 2 + h.sum()\n" in found
    assert "y = torch.relu(x) * 2 + h\n" in found
    assert "y = None\n" in found
    assert "y = 1\n" in found


def test_node_passes_leave_dotted_imports_alone_and_go_on_after_them():
    found = candidates(node_pass(simpler_expressions), "import collections.abc\nfrom a.b import c\ny = f(x)\n")
    assert "import collections.abc\nfrom a.b import c\ny = x\n" in found
    assert all(c.startswith("import collections.abc\nfrom a.b import c\n") for c in found)


def test_smaller_literals_shrink_sizes_floats_and_collections():
    found = candidates(node_pass(smaller_literals), "x = torch.randn(3, 4)\nitems = [a, b, c]\nt = (1.5, 2)\n")
    assert "x = torch.randn(1, 4)\nitems = [a, b, c]\nt = (1.5, 2)\n" in found
    assert "x = torch.randn(3, 2)\nitems = [a, b, c]\nt = (1.5, 2)\n" in found
    assert not any("randn(3, 0)" in c for c in found)
    assert "x = torch.randn(3, 4)\nitems = [a]\nt = (1.5, 2)\n" in found
    assert "x = torch.randn(3, 4)\nitems = [a, b, c]\nt = (1.5,)\n" in found
    assert "x = torch.randn(3, 4)\nitems = [a, b, c]\nt = (1.0, 2)\n" in found
    assert not any("randn(3, 4)" not in c and "randn(4, 4)" in c for c in found)


def test_zero_and_one_do_not_grow():
    assert candidates(node_pass(smaller_literals), "x = f(0)\n") == []
    assert candidates(node_pass(smaller_literals), "x = f(1)\n") == []
    assert candidates(node_pass(smaller_literals), "x = f(2)\n") == ["x = f(1)\n"]


def test_strip_comments_removes_line_and_trailing_comments():
    assert candidates(strip_comments, "# head\nx = 1  # why\n\ny = 2\n") == ["x = 1\n\ny = 2\n"]
    assert candidates(strip_comments, "x = 1\n") == []


def test_inline_names_replaces_uses_of_a_name_assigned_once():
    found = candidates(inline_names, """\
        def f(x):
            h = x
            total = h.sum() + h.h
            return total
        """)
    assert found == [code("""\
        def f(x):
            total = x.sum() + x.h
            return total
        """)]


def test_inline_names_leaves_names_assigned_again_and_computed_values():
    assert all(c.startswith("h = x\nh = h + 1\n") for c in candidates(inline_names, "h = x\nh = h + 1\ny = h\n"))
    assert candidates(inline_names, "h = f(x)\ny = h + 1\n") == []


def test_remove_parameter_everywhere_drops_the_argument_of_each_call():
    found = candidates(remove_parameter_everywhere, """\
        class Stack(torch.nn.Module):
            def __init__(self, config, depth=2):
                super().__init__()
        def helper(a, b):
            return a
        fn = Stack(CONFIG, depth=3)
        y = helper(1, b=2)
        """)
    assert code("""\
        class Stack(torch.nn.Module):
            def __init__(self, depth=2):
                super().__init__()
        def helper(a, b):
            return a
        fn = Stack(depth=3)
        y = helper(1, b=2)
        """) in found
    assert code("""\
        class Stack(torch.nn.Module):
            def __init__(self, config):
                super().__init__()
        def helper(a, b):
            return a
        fn = Stack(CONFIG)
        y = helper(1, b=2)
        """) in found
    assert code("""\
        class Stack(torch.nn.Module):
            def __init__(self, config, depth=2):
                super().__init__()
        def helper(a):
            return a
        fn = Stack(CONFIG, depth=3)
        y = helper(1)
        """) in found


def test_fewer_parts_drops_items_of_lists_and_longer_tuples():
    found = candidates(node_pass(fewer_parts), "t = (a, b, c)\nl = [a, b]\n")
    assert "t = (a, c)\nl = [a, b]\n" in found and "t = (a, b)\nl = [a, b]\n" in found
    assert "t = (a, b, c)\nl = [b]\n" in found


def test_staticmethod_and_classmethod_decorators_stay():
    source = "class F:\n    @staticmethod\n    @traced\n    def forward(ctx):\n        pass\n"
    found = candidates(node_pass(fewer_parts), source)
    assert "class F:\n    @staticmethod\n    def forward(ctx):\n        pass\n" in found
    assert not any("@staticmethod" not in candidate for candidate in found)


def test_remove_harness_argument_drops_a_parameter_of_fn_with_its_input():
    found = candidates(remove_harness_argument, """\
        def fn(x, names):
            return x
        def inputs():
            return (torch.ones(1), ["a"])
        def drive(f):
            return f(torch.ones(2), ["b"])
        """)
    assert found[1] == code("""\
        def fn(x):
            return x
        def inputs():
            return (torch.ones(1),)
        def drive(f):
            return f(torch.ones(2))
        """)
    assert len(found) == 2


def test_remove_harness_argument_reads_forward_of_the_module_fn_is():
    found = candidates(remove_harness_argument, """\
        class M(torch.nn.Module):
            def forward(self, x, steps):
                return x
        fn = M()
        def inputs():
            return (torch.ones(1), 3)
        """)
    assert found == [code("""\
        class M(torch.nn.Module):
            def forward(self, steps):
                return x
        fn = M()
        def inputs():
            return (3,)
        """), code("""\
        class M(torch.nn.Module):
            def forward(self, x):
                return x
        fn = M()
        def inputs():
            return (torch.ones(1),)
        """)]


def test_parts_that_need_parentheses_keep_them():
    found = candidates(node_pass(simpler_expressions), "y = f((a, b), c)\nz = torch.zeros(())\n")
    assert "y = (a, b)\nz = torch.zeros(())\n" in found
    assert "y = f((a, b), c)\nz = ()\n" in found


def test_inline_helpers_puts_the_body_of_a_function_called_once_at_its_call():
    found = candidates(inline_helpers, """\
        def scale(t, k=2):
            \"\"\"Doc.\"\"\"
            y = t * k
            return y + 1
        def fn(x):
            out = scale(x)
            return out
        """)
    assert found == [code("""\
        def fn(x):
            t = x
            k = 2
            y = t * k
            out = y + 1
            return out
        """)]


def test_inline_helpers_inlines_a_method_called_once_through_self_and_a_return_of_a_call():
    found = candidates(inline_helpers, """\
        class M:
            def forward(self, x):
                return self.prep(x, scale=3)
            def prep(self, x, scale):
                x.mul_(scale)
                return x.relu()
        """)
    assert found == [code("""\
        class M:
            def forward(self, x):
                scale = 3
                x.mul_(scale)
                return x.relu()
        """)]


def test_inline_helpers_leaves_helpers_called_twice_or_with_early_returns_or_yields():
    assert candidates(inline_helpers, """\
        def twice(x):
            return x
        def early(x):
            if x:
                return 1
            return 2
        def gen(x):
            yield x
        def noted(x):
            return x
        NOTE = noted
        def fn(x):
            a = twice(x)
            b = twice(a)
            c = early(b)
            d = gen(c)
            return noted(d)
        """) == []


def test_inline_helpers_of_a_call_statement_and_of_a_helper_without_return():
    found = candidates(inline_helpers, """\
        LOG = []
        def note(v):
            LOG.append(v)
        def fn(x):
            note(x)
            result = note(x + 1)
            return x
        """)
    assert found == []  # called twice
    found = candidates(inline_helpers, """\
        LOG = []
        def note(v):
            LOG.append(v)
        def fn(x):
            note(x)
            return x
        """)
    assert found == [code("""\
        LOG = []
        def fn(x):
            v = x
            LOG.append(v)
            return x
        """)]


def test_drop_unused_takes_every_unreferenced_definition_and_docstring_in_one_candidate():
    found = candidates(drop_unused, """\
        \"\"\"Module doc.\"\"\"
        import math
        import torch
        SCALE = 3
        USED = 2
        class Helper:
            def go(self):
                return 1
        def unused(x):
            return x * SCALE
        def fn(x):
            \"\"\"Doc.\"\"\"
            return x * USED
        def inputs():
            return (torch.ones(2),)
        COMPILE_KWARGS = {"fullgraph": True}
        """)
    assert found == [code("""\
        import torch
        SCALE = 3
        USED = 2
        def fn(x):
            return x * USED
        def inputs():
            return (torch.ones(2),)
        COMPILE_KWARGS = {"fullgraph": True}
        """)]  # SCALE goes next round, once `unused` is gone
    assert candidates(drop_unused, "import torch\ndef fn(x):\n    return torch.relu(x)\n") == []


def test_a_pass_that_skips_proposes_from_start_what_it_would_have_proposed_there():
    source = code("""
        def f(x):
            if x:
                y = 2
                return x + y
            return [x, 3]
        z = f(4)
    """)
    module = cst.parse_module(source)
    for named in PASSES:
        every = [candidate.code for _, candidate in named.proposals(module)]
        later = list(named.proposals(module, 3))
        assert [position for position, _ in later] == list(range(3, len(every)))
        assert [candidate.code for _, candidate in later] == every[3:], named.name


def test_node_passes_try_children_before_parents_and_no_constant_as_a_callee():
    found = candidates(node_pass(simpler_expressions), "y = torch.relu(x) + h.w\n")
    assert found[-4:] == ["y = torch.relu(x)\n", "y = h.w\n", "y = None\n", "y = 1\n"]  # the sum last
    assert "y = x + h.w\n" in found and "y = torch.relu(x) + None\n" in found
    assert not any("None(x)" in c or "1(x)" in c for c in found)


def test_every_pass_has_a_name():
    assert len({p.name for p in PASSES}) == len(PASSES)
