"""What matters: the variants asked of a reduced program, and how their outcomes read."""

from __future__ import annotations

import textwrap

from mutator.reduce import constructs
from mutator.reduce.constructs import probes
from mutator.reduce.crosscheck import ABSENT
from mutator.reduce.matters import BREAKS_PROGRAM, PASSES, STILL_FAILS, Matters, Row
from mutator.report import matters as words


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


def test_what_is_needed_and_what_is_not():
    result = Matters(rows=[
        Row("a graph break", "without the graph break", PASSES),
        Row("a `set` subclass", "as a `frozenset` subclass", STILL_FAILS),
        Row("a `set` subclass", "as a plain `set` (`Tags = set`)", PASSES),
        Row("a generator expression", "with a list comprehension instead", STILL_FAILS),
        Row("the generator's filter", "without the `if` filter", STILL_FAILS, removal=True),
        Row("`@deco`", "without `@deco`", BREAKS_PROGRAM, "eager run raised: NameError", removal=True),
        Row("a `try`/`except RuntimeError`", "without the `try` (its body alone)", BREAKS_PROGRAM,
            "eager run raised: RuntimeError", removal=True),
        Row("a `try`/`except RuntimeError`", "catching `Exception` instead of `RuntimeError`", STILL_FAILS),
    ], removed=["`torch.func.vmap`"], checks=12, seconds=1.5)
    data = result.as_json()
    assert data["needed"] == ["a graph break", "a `set` subclass"]
    # a removal that still fails says "not needed"; a neighbour that fails says only that its
    # kind does not matter (the try cannot go: eager raises without it); `@deco`: nothing known
    assert data["not_needed"] == ["the generator's filter"]
    assert data["any_neighbour"] == ["a generator expression", "a `try`/`except RuntimeError`"]
    assert words.headline(data) == "a graph break and a `set` subclass"
    text = "\n".join(words.markdown(data))
    assert "- a `set` subclass: passes as a plain `set` (`Tags = set`). still fails as a `frozenset` subclass" in text
    assert "- `torch.func.vmap`: the reduction took it out and the bug stayed" in text
    assert "**Any of its kind**" in text and \
        "- a `try`/`except RuntimeError`: still fails catching `Exception` instead of `RuntimeError`" in text
    assert "Checked 8 variants of the reduced program (12 runs, 1.5 s), 2 of which broke the program eagerly." in text


def test_the_title_names_what_matters():
    from mutator.findings.finding import Finding
    from mutator.findings.signature import Signature
    from mutator.report.issue import title

    finding = Finding(Signature("MISMATCH", observation="result:value:Tensor"), reason="values differ",
                      directory="findings/x")
    assert title(finding) == '[dynamo] torch.compile(backend="eager") differs from eager: values differ'
    finding.reduction = {"matters": {"needed": ["a graph break", "a `set` subclass"]}}
    assert title(finding) == ('[dynamo] torch.compile(backend="eager") differs from eager with a graph break '
                              'and a `set` subclass: values differ')


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


def test_each_kind_s_report_says_what_is_expected_of_it():
    from mutator.findings.finding import Finding
    from mutator.findings.signature import Signature
    from mutator.report.issue import report_markdown

    def report(kind: str) -> str:
        finding = Finding(Signature(kind, location="limit:value"), reason="fn hit the limit", directory="findings/x")
        return report_markdown(finding, repro_source=None, versions={})

    assert "Expected: Dynamo compiles these calls without reaching `recompile_limit`" in report("SPECIALIZATION")
    assert "documented behaviour" in report("SPECIALIZATION")
    assert "Expected: a call whose inputs and state repeat an earlier call's compiles nothing" in \
        report("RECOMPILE_STORM")
    assert "Expected: the compiled run finishes within" in report("HANG")
    assert "`compiled:` equal to `eager:`" in report("MISMATCH")


def test_vars_and_hasattr_get_their_spelled_out_neighbours():
    got = changes('''
        def fn(x, names):
            params = {n: x for n in names}
            return hasattr(params, "__dict__") and "values" in vars(params)
    ''')
    assert got["`hasattr`"] == ['with `"__dict__" in dir(...)` instead of `hasattr`']
    assert got["`vars`"] == ["with `.__dict__` instead of `vars`"]


def test_the_headline_falls_back_to_what_cannot_go_and_skips_what_the_title_says():
    assert words.headline({"needed": [], "any_neighbour": ["a `try`/`except RuntimeError`"]}) == \
        "a `try`/`except RuntimeError`"
    data = {"needed": ["`fullgraph=True`", "a `set` subclass"]}
    assert words.headline(data) == "`fullgraph=True` and a `set` subclass"
    assert words.headline(data, said="fullgraph") == "a `set` subclass"


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


# ---- what the reduced program needs, checked in the original ------------------------------------------
class MarkerRunner:
    """Compiled runs return 2 instead of 1 while the program holds one of `causes`."""

    def __init__(self, *causes: str) -> None:
        self.causes = causes

    def submit(self, program, mode, config=None, *, avoid=None):
        from concurrent.futures import Future

        from mutator.core.observation import Mode
        from tests.helpers import call, compiled_run, run

        future = Future()
        buggy = any(cause in program.source for cause in self.causes)
        future.set_result(compiled_run(calls=[call(result=2 if buggy else 1)]) if mode is Mode.COMPILED
                          else run(mode, calls=[call(result=1)]))
        return future


ORIGINAL = textwrap.dedent('''\
    import torch
    LOG = []
    def fn(x):
        LOG.append(len(LOG))
        torch._dynamo.graph_break()
        return x
    def inputs():
        return 1
    ''')


def _against(runner: MarkerRunner, needed: Row) -> list:
    from mutator.core.program import Program
    from mutator.reduce.crosscheck import against_original, describe
    from mutator.reduce.matters import Prober
    from mutator.reduce.reducer import Reducer

    original = Reducer(runner, workers=1).target(Program.from_source(ORIGINAL, "p.py"))
    matters = Matters(rows=[needed, Row("a generator expression", "with a list comprehension instead", STILL_FAILS)])
    agreements = matters.original = against_original(Prober(runner), original, matters)
    # an eager and a compiled run for each construct the original has, twice for a pass
    assert matters.checks == sum(2 + 2 * (a.outcome == PASSES) for a in agreements if a.outcome != ABSENT)
    return [(a.construct, a.outcome) for a in agreements], describe(agreements), matters.drifted


def test_a_construct_the_reduced_program_needs_is_needed_by_the_original_too():
    needed = Row("a graph break", "without the graph break", PASSES, removal=True)
    assert _against(MarkerRunner("graph_break"), needed) == ([("a graph break", PASSES)], "", [])


def test_a_reduction_whose_bug_the_original_does_not_need_says_it_slid_to_another():
    # the original fails without its graph break (LOG.append is its bug); the reduced program
    # lost LOG.append and fails only because of the break
    needed = Row("a graph break", "without the graph break", PASSES, removal=True)
    agreements, sentence, drifted = _against(MarkerRunner("graph_break", "LOG.append"), needed)
    assert agreements == [("a graph break", STILL_FAILS)] and drifted == ["a graph break"]
    assert "another bug" in sentence and "still fails without the graph break" in sentence


def test_a_construct_the_original_lacks_is_no_evidence():
    needed = Row("`@functools.wraps`", "without `@functools.wraps`", PASSES, removal=True)
    agreements, sentence, drifted = _against(MarkerRunner("graph_break"), needed)
    assert agreements == [("`@functools.wraps`", ABSENT)] and not drifted and not sentence
