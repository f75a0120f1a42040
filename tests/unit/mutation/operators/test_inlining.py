"""Before/after and decline tests for the X operators in inlining.py (inline and outline helpers)."""

from mutator.mutation.operators.inlining import InlineHelper, OutlineHelper

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites

# -- X.inline_helper ----------------------------------------------------------------------------

def test_inlines_a_straight_line_helper_before_the_statement():
    before = """
        import torch

        def scale(x, k=2.0):
            y = x * k
            return y + 1

        def fn(x):
            h = x.sin()
            return scale(h.cos()) * 3
    """
    after = """
        import torch

        def scale(x, k=2.0):
            y = x * k
            return y + 1

        def fn(x):
            h = x.sin()
            x_2 = h.cos()
            y_2 = x_2 * 2.0
            return (y_2 + 1) * 3
    """
    assert_rewrites(InlineHelper, before, after, seed=0)


def test_inlines_returns_under_ifs_as_a_conditional_expression_inside_a_lambda():
    before = """
        import torch

        def pick(h, kind):
            if kind == "relu":
                return torch.relu(h)
            return h

        def fn(x, kind):
            f = lambda t: pick(t, kind)
            return f(x)
    """
    after = """
        import torch

        def pick(h, kind):
            if kind == "relu":
                return torch.relu(h)
            return h

        def fn(x, kind):
            f = lambda t: (torch.relu(t) if (kind == "relu") else t)
            return f(x)
    """
    assert_rewrites(InlineHelper, before, after, seed=0)


def test_inlines_a_method_called_on_self():
    before = """
        import torch

        class M(torch.nn.Module):
            def gain(self, h):
                return h * self.scale

            def forward(self, x):
                return self.gain(x.relu()) + 1

        fn = M()
        fn.scale = 2.0
    """
    after = """
        import torch

        class M(torch.nn.Module):
            def gain(self, h):
                return h * self.scale

            def forward(self, x):
                h_2 = x.relu()
                return (h_2 * self.scale) + 1

        fn = M()
        fn.scale = 2.0
    """
    assert_rewrites(InlineHelper, before, after, seed=0)


def test_inline_declines_a_method_an_instance_attribute_may_shadow():
    before = """
        import torch

        class M(torch.nn.Module):
            def gain(self, h):
                return h * 2

            def forward(self, x):
                return self.gain(x)

        fn = M()
        fn.gain = torch.sigmoid
    """
    assert_declines(InlineHelper, before, "no site for inline_helper")


def test_inline_declines_decorated_helpers_and_shadowed_globals():
    before = """
        import functools
        import torch

        SCALE = 2.0

        @functools.lru_cache(maxsize=None)
        def width(n):
            return n // 2

        def scaled(x):
            return x * SCALE

        def fn(x):
            SCALE = 3.0
            return scaled(x)[: width(4)] + SCALE
    """
    assert_declines(InlineHelper, before, "no site for inline_helper")


# -- X.outline_helper ---------------------------------------------------------------------------

def test_outlines_a_run_of_statements_returning_what_later_code_reads():
    before = """
        import torch

        def fn(x, w):
            a = x * w
            b = a.sum()
            c = a - b
            return c, b
    """
    after = """
        import torch


        def helper(x, w):
            a = x * w
            b = a.sum()
            c = a - b
            return b, c


        def fn(x, w):
            b, c = helper(x, w)
            return c, b
    """
    assert_rewrites(OutlineHelper, before, after, seed=2)


def test_outlines_an_expression_of_a_method():
    before = """
        import torch

        class M(torch.nn.Module):
            def forward(self, x):
                h = x.relu()
                if h.sum() > 0:
                    h = h * 2
                return h + 1

        fn = M()
    """
    after = """
        import torch


        def helper(x):
            return x.relu()


        class M(torch.nn.Module):
            def forward(self, x):
                h = helper(x)
                if h.sum() > 0:
                    h = h * 2
                return h + 1

        fn = M()
    """
    assert_rewrites(OutlineHelper, before, after, seed=5)


def test_outline_declines_code_that_needs_its_frame():
    before = """
        import torch

        class M(torch.nn.Module):
            def forward(self, x):
                return super().forward(x)

        fn = M()
    """
    assert_declines(OutlineHelper, before, "no site for outline_helper")
