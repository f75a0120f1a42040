"""Repair rules, before and after, on failures shaped like the ones campaigns log."""

from __future__ import annotations

import textwrap

from mutator.mutation.operator import Mutant, Step
from mutator.core.program import Program
from mutator.repair import NotRepaired, Repaired, RepairRequest, repair_by_rules

from tests.unit.repair.helpers import NAME, request


def repaired_source(req: RepairRequest) -> str:
    result = repair_by_rules(req)
    assert isinstance(result, Repaired), result
    return result.program.source


def test_define_name_imports_a_module_the_operator_used():
    req = request("""\
        import torch
        def fn(x):
            return x * math.pi
        def inputs():
            return (torch.ones(2),)
        """, "NameError", "name 'math' is not defined", line=3)
    assert repaired_source(req).startswith("import torch\nimport math\n")
    assert repair_by_rules(req).how == "rule.define_name"


def test_define_name_copies_the_definition_the_parent_had():
    parent = """\
        import torch
        SCALE = 3
        def fn(x):
            return x * SCALE
        def inputs():
            return (torch.ones(2),)
        """
    mutant = """\
        import torch
        def fn(x):
            try:
                return x * SCALE
            except ValueError:
                raise
        def inputs():
            return (torch.ones(2),)
        """
    source = repaired_source(request(mutant, "NameError", "name 'SCALE' is not defined", line=4, parent=parent))
    assert "SCALE = 3\n" in source and "try:" in source


def test_define_name_binds_the_closest_name_before_the_failing_statement():
    source = repaired_source(request("""\
        import torch
        def fn(x):
            total = x + 1
            return totl * 2
        def inputs():
            return (torch.ones(2),)
        """, "NameError", "name 'totl' is not defined", line=4))
    assert "    total = x + 1\n    totl = total\n    return totl * 2\n" in source


def test_bind_local_binds_before_the_use():
    source = repaired_source(request("""\
        import torch
        def fn(x):
            if x.sum() > 100:
                y = x
            return y
        def inputs():
            return (torch.ones(2),)
        """, "UnboundLocalError", "cannot access local variable 'y' where it is not associated with a value", line=5))
    assert "        y = x\n    y = None\n    return y\n" in source


def test_fit_call_drops_an_extra_argument_and_an_unknown_keyword_on_the_failing_line():
    extra = request("""\
        import torch
        def helper(a, b):
            return a + b
        def fn(x):
            return helper(x, x, x)
        def inputs():
            return (torch.ones(2),)
        """, "TypeError", "helper() takes 2 positional arguments but 3 were given", line=5)
    assert "return helper(x, x)\n" in repaired_source(extra)
    keyword = request("""\
        import torch
        def helper(a):
            return a
        def fn(x):
            return helper(x, scale=2)
        def inputs():
            return (torch.ones(2),)
        """, "TypeError", "helper() got an unexpected keyword argument 'scale'", line=5)
    assert "return helper(x)\n" in repaired_source(keyword)


def test_fit_call_gives_missing_parameters_a_default():
    source = repaired_source(request("""\
        import torch
        class M(torch.nn.Module):
            def forward(self, x, bias):
                return x + (0 if bias is None else bias)
        fn = M()
        def inputs():
            return (torch.ones(2),)
        """, "TypeError", "M.forward() missing 1 required positional argument: 'bias'", line=3))
    assert "def forward(self, x, bias=None):" in source


def test_agree_sizes_carries_the_operators_size_change_to_the_other_tensors():
    parent = """\
        import torch
        def fn(x, y):
            return x + y
        def inputs():
            return (torch.randn(3, 4), torch.ones(3, 4))
        """
    mutant = """\
        import torch
        def fn(x, y):
            return x + y
        def inputs():
            return (torch.randn(6, 4), torch.ones(3, 4))
        """
    message = "The size of tensor a (6) must match the size of tensor b (3) at non-singleton dimension 0"
    source = repaired_source(request(mutant, "RuntimeError", message, line=3, parent=parent, op="G2.batch_size_sweep"))
    assert "torch.randn(6, 4), torch.ones(6, 4)" in source


def test_next_default_and_set_attribute():
    source = repaired_source(request("""\
        import torch
        def fn(x):
            it = iter([])
            return x + next(it)
        def inputs():
            return (torch.ones(2),)
        """, "StopIteration", "", line=4))
    assert "next(it, None)" in source
    source = repaired_source(request("""\
        import torch
        class M(torch.nn.Module):
            def forward(self, x):
                return x if self.cache is None else self.cache
        fn = M()
        def inputs():
            return (torch.ones(2),)
        """, "AttributeError", "'M' object has no attribute 'cache'", line=4))
    assert "class M(torch.nn.Module):\n    cache = None\n" in source


def test_no_rule_a_second_repair_and_a_rule_that_would_undo_the_mutation():
    other = request("""\
        import torch
        def fn(x):
            return x
        def inputs():
            return (torch.ones(2),)
        """, "ZeroDivisionError", "division by zero", line=3)
    result = repair_by_rules(other)
    assert isinstance(result, NotRepaired) and "no rule for ZeroDivisionError" in result.reason
    again = RepairRequest(other.program, Mutant(other.program, (Step("E2.wrap_in_try", "fn:2"),
                                                                 Step("repair:rule.define_name", ""))),
                          None, other.error, "raised")
    assert repair_by_rules(again) == NotRepaired("already repaired once")
    assert str(again.mutant.steps[1]) == "repair:rule.define_name"
    assert again.mutant.provenance == "E2.wrap_in_try@fn:2+repair:rule.define_name"


def test_narrow_sweep_keeps_the_sweep_at_the_program_s_own_batch_size():
    source = repaired_source(request("""\
        import torch
        W = torch.ones(3, 4)
        def fn(x):
            return x + W
        def inputs():
            return (torch.randn(3, 4),)
        def inputs_batch(n):
            return (torch.randn(n, 4),)
        def drive(f):
            out = [f(*inputs())]
            for size in (6, 3):
                out.append(f(*inputs_batch(size)))
            return out
        """, "RuntimeError", "The size of tensor a (6) must match the size of tensor b (3) at non-singleton dimension 0",
        line=4, op="G2.batch_size_sweep"))
    assert "    for size in (3,):\n        out.append(f(*inputs_batch(size)))\n" in source


def test_allow_breaks_drops_fullgraph_where_the_operator_inserted_a_graph_break():
    program = Program.from_source(textwrap.dedent("""\
        import torch
        COMPILE_KWARGS = {"fullgraph": True, "dynamic": False}
        def fn(x):
            torch._dynamo.graph_break()
            return x + 1
        def inputs():
            return (torch.ones(2),)
        """), NAME)
    req = RepairRequest(program, Mutant(program, (Step("X.insert_graph_break", "fn:4"),)), None, None, "completed",
                        "call 1 (fn) raised Unsupported: fullgraph=True and the program calls "
                        "torch._dynamo.graph_break() itself")
    source = repaired_source(req)
    assert 'COMPILE_KWARGS = {"dynamic": False}' in source and "graph_break()" in source
