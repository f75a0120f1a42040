from mutator.mutation.operators.structure import InsertGraphBreak

from tests.unit.operators.helpers import assert_declines, assert_rewrites


def test_inserts_graph_break_between_statements():
    before = """
        import torch

        def fn(x):
            y = x.sin()
            return y + 1
    """
    after = """
        import torch

        def fn(x):
            y = x.sin()
            torch._dynamo.graph_break()
            return y + 1
    """
    result = assert_rewrites(InsertGraphBreak, before, after, seed=0)
    assert result.steps[0].site == "fn:4"  # the block's first line


def test_graph_break_only_inside_the_compiled_region():
    before = """
        import torch

        def helper_not_called(x):
            return x

        def fn(x):
            return x.cos()
    """
    after = """
        import torch

        def helper_not_called(x):
            return x

        def fn(x):
            torch._dynamo.graph_break()
            return x.cos()
    """
    assert_rewrites(InsertGraphBreak, before, after, seed=3)


def test_declines_without_a_compiled_region():
    before = """
        import torch

        class M(torch.nn.Module):
            pass

        fn = M()
    """
    assert_declines(InsertGraphBreak, before, "no site for insert_graph_break in the region")
