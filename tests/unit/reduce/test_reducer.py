"""The reducer, against a scripted runner: no processes, no torch."""

import itertools
import textwrap
from concurrent.futures import Future

import pytest

from mutator.findings.signature import Signature
from mutator.core.observation import Mode, Outcome, RunConfig
from mutator.core.program import Program, ProgramForm
from mutator.reduce.reducer import NotReproduced, Reducer, compiles, orphans_a_name, unbound_names

from tests.helpers import call, compiled_run, exc, run, tensor


NOISY = textwrap.dedent('''\
    """A program with a bug marker buried in distraction."""
    import math

    WIDTH = 16  # unused by the bug


    def helper(a, b):
        return a * b + math.pi


    class Model:
        def __init__(self, width):
            self.width = width

        def forward(self, x):
            for i in range(3):
                x = x + i
            return BUG(x)


    fn = Model(WIDTH)


    def inputs():
        return (helper(2, 3), [1, 2, 3])
    ''')


class SourceRunner:
    """A compiled run diverges when the program still calls BUG; every run is counted."""

    def __init__(self):
        self.runs = 0

    def submit(self, program, mode, config=None, *, avoid=None):
        self.runs += 1
        buggy = "BUG(" in program.source
        future = Future()
        if mode is Mode.EAGER:
            future.set_result(run(calls=[call(result=tensor([1.0]))]))
        elif mode is Mode.REFERENCE:
            future.set_result(run(Mode.REFERENCE, calls=[call(result=tensor([1.0], "torch.float64"))]))
        else:
            future.set_result(compiled_run(calls=[call(result=tensor([2.0 if buggy else 1.0]))]))
        return future


def test_the_reducer_keeps_only_what_the_signature_needs_and_the_form():
    runner = SourceRunner()
    reduction = Reducer(runner, workers=2).reduce(Program.from_source(NOISY, "noisy.py"))
    reduced = reduction.reduced
    assert reduced.form is ProgramForm.HARNESS and reduction.confirmed
    assert "BUG(" in reduced.source and "math" not in reduced.source and "helper" not in reduced.source
    assert reduction.lines[1] <= 6, reduced.source
    assert reduction.signature.kind == "MISMATCH"
    stats = reduction.stats
    assert stats.checks == sum(p.tried for p in stats.passes.values()) and stats.checks > 0
    assert stats.passes["delete statements"].kept >= 3


def test_a_reduced_program_is_a_fixpoint():
    first = Reducer(SourceRunner(), workers=2).reduce(Program.from_source(NOISY, "noisy.py")).reduced
    again = Reducer(SourceRunner(), workers=2).reduce(first)
    assert again.reduced.source == first.source


def test_the_precondition_is_checked_first():
    clean = NOISY.replace("BUG(x)", "x")
    runner = SourceRunner()
    with pytest.raises(NotReproduced, match="PASS, not a finding"):
        Reducer(runner, workers=2).reduce(Program.from_source(clean, "clean.py"))
    assert runner.runs == 2  # one eager and one compiled run, nothing reduced


def test_a_finding_that_now_has_another_signature_is_not_reduced():
    other = Signature("CRASH", exception="TypeError")
    with pytest.raises(NotReproduced, match="not CRASH / TypeError"):
        Reducer(SourceRunner(), workers=2).reduce(Program.from_source(NOISY, "noisy.py"), expect=other)


def test_the_time_limit_keeps_the_smallest_so_far():
    ticks = itertools.count()
    reduction = Reducer(SourceRunner(), workers=2, clock=lambda: next(ticks)).reduce(
        Program.from_source(NOISY, "noisy.py"), time_limit=5)
    assert reduction.stats.timed_out and "BUG(" in reduction.reduced.source
    assert len(reduction.reduced.source) < len(NOISY)


class EagerFailsWithoutGuard(SourceRunner):
    """Like SourceRunner, but the eager run raises at program level once GUARD() is gone,
    and the compiled run then stops with the same crash either way."""

    def submit(self, program, mode, config=None, *, avoid=None):
        if mode is Mode.EAGER and "GUARD()" not in program.source:
            self.runs += 1
            future = Future()
            future.set_result(run(outcome=Outcome.RAISED, calls=[call(result=tensor([1.0]))],
                                  uncaught=exc("builtins.RuntimeError")))
            return future
        return super().submit(program, mode, config)


def test_a_candidate_must_end_eagerly_as_the_original_did():
    source = NOISY.replace("        return BUG(x)", "        GUARD()\n        return BUG(x)")
    reduction = Reducer(EagerFailsWithoutGuard(), workers=2).reduce(Program.from_source(source, "noisy.py"))
    assert "GUARD()" in reduction.reduced.source and reduction.confirmed


def test_candidates_run_with_a_short_timeout_but_hangs_keep_theirs():
    seen = []

    class Recording(SourceRunner):
        def submit(self, program, mode, config=None, *, avoid=None):
            seen.append(config.timeout if config is not None else None)
            return super().submit(program, mode, config)

    Reducer(Recording(), workers=2, config=RunConfig(timeout=60)).reduce(Program.from_source(NOISY, "noisy.py"))
    assert seen[0] == 60 and 5.0 in seen  # the precondition with the campaign's, candidates with 10 x (at least 5 s)


def test_a_reductions_runs_record_no_arcs_whatever_the_campaigns_runs_do():
    arcs = set()

    class Recording(SourceRunner):
        config = RunConfig(arcs=True)  # the campaign's pool: its first passes trace

        def submit(self, program, mode, config=None, *, avoid=None):
            arcs.add(config.arcs)
            return super().submit(program, mode, config)

    for config in (RunConfig(arcs=True), None):
        reduction = Reducer(Recording(), workers=2, config=config).reduce(Program.from_source(NOISY, "noisy.py"))
        assert reduction.confirmed
    assert arcs == {False}


def test_a_target_already_checked_is_not_checked_again_and_the_candidates_runs_are_counted():
    program = Program.from_source(NOISY, "noisy.py")
    runner = SourceRunner()
    reducer = Reducer(runner, workers=2)
    target = reducer.target(program)
    precondition = runner.runs
    reduction = reducer.reduce(program, target=target)
    assert reduction.confirmed
    runs = reducer.runs
    final_check = precondition  # the reduced program's full check runs as the precondition's did
    assert runs.eager + runs.compiled == runner.runs - precondition - final_check
    assert 0 < runs.compiled <= runs.eager - runs.eager_rejected


def test_a_candidate_reading_a_name_it_no_longer_binds_is_rejected_without_a_run():
    original = "import torch\nW = 2\ndef helper(a):\n    return a * W\nprint(helper(3), undefined_global)\n"
    unbound = unbound_names(original)
    assert unbound == {"undefined_global", "print"}
    assert orphans_a_name(original.replace("W = 2\n", ""), unbound)
    assert orphans_a_name(original.replace("import torch\n", "").replace("a * W", "torch.sin(a)"), unbound)
    assert not orphans_a_name(original.replace("a * W", "a"), unbound)  # W unused, deleting it is fine
    assert not orphans_a_name("def f(W):\n    return W\nprint(f(1))\n", unbound)  # that W is f's parameter
    assert not orphans_a_name("len = 3\nprint(len)\n".replace("len = 3\n", ""), unbound_names("len = 3\n"))
    assert unbound_names("from m import *\nx\n") is None
    scoped = "def f(h):\n    return h\ndef g(x):\n    h = x + 1\n    return h\n"
    assert orphans_a_name(scoped.replace("    h = x + 1\n", ""), unbound_names(scoped))  # h is f's, not g's
    assert not orphans_a_name("def g():\n    global G\n    G = 1\n    return G\n", set())


def test_candidates_that_orphan_a_name_cost_no_run():
    source = NOISY.replace("def inputs():", "def unused_helper():\n    return helper(1, 2)\n\n\ndef inputs():")
    submitted = []

    class Recording(SourceRunner):
        def submit(self, program, mode, config=None, *, avoid=None):
            submitted.append(program.source)
            return super().submit(program, mode, config)

    reduction = Reducer(Recording(), workers=2).reduce(Program.from_source(source, "noisy.py"))
    assert reduction.confirmed and "BUG(" in reduction.reduced.source and "helper" not in reduction.reduced.source
    unbound = unbound_names(source)
    assert not any(orphans_a_name(s, unbound) for s in submitted)
    assert orphans_a_name(source.replace("def helper(a, b):\n    return a * b + math.pi\n", ""), unbound)


def test_a_candidate_python_would_not_compile_is_rejected_without_a_run():
    assert compiles("for i in range(3):\n    break\n", "p.py")
    assert not compiles("break\n", "p.py")  # a lifted loop body
    assert not compiles("return 1\n", "p.py")
    assert not compiles("def f():\n    x = 1\n    global x\n", "p.py")
    assert not compiles("x = (\n", "p.py")


def test_runs_go_as_many_at_a_time_as_workers_and_none_start_after_an_interesting_candidate():
    runner = SourceRunner()
    reducer = Reducer(runner, workers=2)
    target = reducer.target(Program.from_source(NOISY, "noisy.py"))
    clean = NOISY.replace("BUG(x)", "x")
    sources = [clean, NOISY + "\n# 1\n", NOISY + "\n# 2\n", NOISY + "\n# 3\n", NOISY + "\n# 4\n"]
    runner.runs = 0
    verdicts = reducer.interesting(sources, target)
    # eager 0 and 1, then compiled 0 and 1 (compiled runs first): 1 is interesting, 2 to 4 never start
    assert verdicts == [False, True, None, None, None]
    assert runner.runs == 4 and reducer.runs.compiled == 2 and reducer.runs.eager == 2


def test_a_constant_called_or_subscripted_is_not_a_candidate():
    assert compiles("y = f(x)\n", "p.py") and compiles("y = x[0]\n", "p.py")
    assert not compiles("y = None(x)\n", "p.py") and not compiles("y = 1[0]\n", "p.py")


# ---- the predicate keeps the failure's shape, not only its signature -------------------------------------
class ScriptedFailure:
    """Eager runs return 1; compiled runs fail as the program's marker lines say:
    `MESSAGE = "..."` crashes with Dynamo's internal error carrying that message,
    `RESULT = ...` returns that Python value (a divergence of the result)."""

    def submit(self, program, mode, config=None, *, avoid=None):
        future = Future()
        scope: dict = {}
        for line in program.source.splitlines():
            if line.startswith(("MESSAGE = ", "RESULT = ", "EAGER = ")):
                exec(line, scope)
        eager = scope.get("EAGER", 1)
        if mode is not Mode.COMPILED:
            future.set_result(run(mode, calls=[call(result=_value(eager))]))
        elif "MESSAGE" in scope:
            internal = exc("torch._dynamo.exc.InternalTorchDynamoError", scope["MESSAGE"], dynamo=True,
                           bases=("builtins.RuntimeError", "builtins.Exception", "builtins.BaseException"))
            future.set_result(compiled_run(calls=[call(exception=internal)]))
        else:
            future.set_result(compiled_run(calls=[call(result=_value(scope["RESULT"]))]))
        return future


def _value(value):
    from mutator.core.values import SeqValue, SetValue
    if isinstance(value, (list, tuple)):
        return SeqValue(type(value).__name__, tuple(_value(v) for v in value))
    if isinstance(value, set):
        return SetValue("set", tuple(_value(v) for v in sorted(value)))
    return value


def _harness(marker: str) -> Program:
    return Program.from_source(f"{marker}\n\ndef fn(x):\n    return x\n\ndef inputs():\n    return 1\n", "p.py")


def _verdicts(original: str, candidates: list[str]) -> list[bool | None]:
    reducer = Reducer(ScriptedFailure(), workers=1)
    target = reducer.target(_harness(original))
    return [reducer.interesting([_harness(c).source], target)[0] for c in candidates]


def test_a_crash_that_slides_to_another_error_at_the_same_site_is_rejected():
    original = 'MESSAGE = "AttributeError: \'_Proxy\' object has no attribute \'_proxy\'"'
    assert _verdicts(original, [
        'MESSAGE = "TypeError: issubclass() arg 1 must be a class"',  # the same signature: another bug
        'MESSAGE = "AttributeError: \'_Box\' object has no attribute \'x\'"',  # other names, one shape
    ]) == [False, True]


def test_a_mismatch_whose_diverging_path_changes_is_rejected():
    # result: value: int in each: in the result itself, or in its first item
    assert _verdicts("RESULT = 2", ["EAGER = [1]\nRESULT = [2]", "RESULT = 3"]) == [False, True]
    assert _verdicts("EAGER = [1]\nRESULT = [2]", ["EAGER = (7,)\nRESULT = (9,)", "RESULT = 2"]) == [True, False]


def test_a_mismatch_whose_values_kinds_change_is_rejected():
    # result: type: list in both; compiled gives a tuple, then a set
    assert _verdicts("EAGER = [1]\nRESULT = (1,)", ["EAGER = [1]\nRESULT = {1}", "EAGER = [2]\nRESULT = (2,)"]) \
        == [False, True]


class EagerRaisesOtherwiseWithoutGuard(SourceRunner):
    """The eager call raises a RuntimeError (a view that is not contiguous) that compiled code
    does not raise; once GUARD() is gone, eager raises another one (a view of the wrong
    shape): the same signature, but not the same report."""

    def submit(self, program, mode, config=None, *, avoid=None):
        self.runs += 1
        future = Future()
        if mode is Mode.COMPILED:
            future.set_result(compiled_run(calls=[call(result=tensor([2.0]))]))
            return future
        message = "view size is not compatible with input tensor's size and stride" if "GUARD()" in program.source \
            else "shape '[3]' is invalid for input of size 2"
        future.set_result(run(mode, calls=[call(exception=exc("builtins.RuntimeError", message))]))
        return future


def test_a_candidate_whose_eager_call_raises_what_the_original_never_raised_is_rejected():
    source = NOISY.replace("        return BUG(x)", "        GUARD()\n        return BUG(x)")
    reduction = Reducer(EagerRaisesOtherwiseWithoutGuard(), workers=2).reduce(Program.from_source(source, "noisy.py"))
    assert "GUARD()" in reduction.reduced.source and reduction.confirmed
    assert len(reduction.reduced.source) < len(source)  # the rest still reduced
