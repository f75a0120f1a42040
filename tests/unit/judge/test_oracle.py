import textwrap
from dataclasses import replace

import pytest

from mutator.core.observation import CompileStats, Mode, Outcome, Recompile, TestOutcome
from mutator.judge.oracle import Oracle
from mutator.core.program import Program
from mutator.core.values import FrameInfo, MapValue, OpaqueValue
from mutator.core.verdict import Verdict

from tests.helpers import PROGRAM, call, compiled_run, exc, run, tensor, with_fullgraph


oracle = Oracle()
UNSUPPORTED = "torch._dynamo.exc.Unsupported"


def program(source: str) -> Program:
    return Program.from_source(textwrap.dedent(source).lstrip(), PROGRAM)


def test_equal_runs_pass():
    calls = [call(result=tensor([1.0]))]
    assert oracle.judge(run(calls=calls), compiled_run(calls=calls)).verdict is Verdict.PASS


def test_both_calls_raising_is_invalid_and_keeps_both_types():
    eager = run(outcome=Outcome.RAISED, calls=[call(exception=exc("ValueError"))], uncaught=exc("ValueError"),
                uncaught_call=0)
    torch_error = exc("torch._dynamo.exc.TorchRuntimeError", bases=("RuntimeError", "Exception"))
    compiled = compiled_run(outcome=Outcome.RAISED, calls=[call(exception=torch_error)], uncaught=torch_error,
                            uncaught_call=0)
    judgement = oracle.judge(eager, compiled)
    assert judgement.verdict is Verdict.INVALID
    assert judgement.eager_exception.type_name == "ValueError"
    assert judgement.exception.type_name == "torch._dynamo.exc.TorchRuntimeError"


def test_compiled_swallowing_an_error_a_call_raised_eagerly_is_a_mismatch():
    eager = run(outcome=Outcome.RAISED, calls=[call(exception=exc("KeyError"))], uncaught=exc("KeyError"),
                uncaught_call=0, detail="raised KeyError: boom")
    judgement = oracle.judge(eager, compiled_run(calls=[call(result=1)]))
    assert judgement.verdict is Verdict.MISMATCH and "compiled returned normally" in judgement.reason
    assert judgement.reason.startswith("call 1 (fn)")


def test_compiled_call_raising_what_eager_did_not_is_a_crash():
    eager = run(calls=[call(result=tensor([1.0]))])
    compiled = compiled_run(calls=[call(exception=exc("torch._dynamo.exc.InternalTorchDynamoError", dynamo=True))],
                            outcome=Outcome.RAISED, uncaught=exc("torch._dynamo.exc.InternalTorchDynamoError"),
                            uncaught_call=0)
    judgement = oracle.judge(eager, compiled)
    assert judgement.verdict is Verdict.CRASH and "symbolic_convert.py" in judgement.reason


def test_dynamo_assertion_error_is_a_crash_recognised_by_its_frame():
    eager = run(calls=[call(result=1)])
    compiled = compiled_run(calls=[call(exception=exc("AssertionError", dynamo=True))])
    judgement = oracle.judge(eager, compiled)
    assert judgement.verdict is Verdict.CRASH and judgement.exception.in_dynamo


@pytest.mark.parametrize("gb_type,verdict,says", [
    ("Failed to trace builtin operator", Verdict.FULLGRAPH_BREAK, "Failed to trace builtin operator"),
    # the program asks for a break and for no breaks: Dynamo is right to refuse
    ("Call to `torch._dynamo.graph_break()`", Verdict.INVALID, "graph_break()"),
    # the forced-graph-breaks configuration asks for one at a leaf return: not a bug either
    ("Forced graph break on leaf function", Verdict.INVALID, "forces a graph break"),
])
def test_unsupported_under_fullgraph_is_a_fullgraph_break_unless_a_break_was_asked_for(gb_type, verdict, says):
    unsupported = exc(UNSUPPORTED, gb_type=gb_type)
    compiled = with_fullgraph(compiled_run(calls=[call(exception=unsupported)]))
    judgement = oracle.judge(run(calls=[call(result=1)]), compiled)
    assert judgement.verdict is verdict and says in judgement.reason


def test_a_data_dependent_branch_refused_under_fullgraph_is_a_fullgraph_break_and_a_crash_otherwise():
    refused = exc("torch._dynamo.exc.UserError", "Consider annotating your code using torch._check*(). Could not "
                  "guard on data-dependent expression Eq(u0, 1) (unhinted: Eq(u0, 1)).", dynamo=True)
    compiled = with_fullgraph(compiled_run(calls=[call(exception=refused)]))
    assert oracle.judge(run(calls=[call(result=1)]), compiled).verdict is Verdict.FULLGRAPH_BREAK
    # without fullgraph Dynamo should have broken the graph: a crash the user sees
    assert oracle.judge(run(calls=[call(result=1)]),
                        compiled_run(calls=[call(exception=refused)])).verdict is Verdict.CRASH


def test_dynamo_declining_the_program_under_a_configuration_is_invalid_not_a_crash():
    declined = replace(exc("unittest.case.SkipTest", "Cannot force graph break on export", dynamo=True),
                       dynamo_frame=FrameInfo("torch/_dynamo/eval_frame.py", 2401, "export"))
    judgement = oracle.judge(run(calls=[call(result=1)]), compiled_run(calls=[call(exception=declined)]))
    assert judgement.verdict is Verdict.INVALID and "declines" in judgement.reason
    unrelated = exc("unittest.case.SkipTest", "skipped by the program")  # not raised in Dynamo
    assert oracle.judge(run(calls=[call(result=1)]),
                        compiled_run(calls=[call(exception=unrelated)])).verdict is Verdict.CRASH


def test_a_forced_break_inside_a_higher_order_operator_is_invalid_but_an_uncaptured_one_of_its_own_is_a_crash():
    text = ("This higher order operator doesn't work unless it is captured completely with torch.compile. Got graph "
            "break/error:\n\n{}\n  Higher Order Operator: torch.cond\n")
    forced = exc("torch._dynamo.exc.UncapturedHigherOrderOpError", text.format("Forced graph break on leaf function"),
                 dynamo=True)
    judgement = oracle.judge(run(calls=[call(result=1)]), compiled_run(calls=[call(exception=forced)]))
    assert judgement.verdict is Verdict.INVALID and "higher-order operator's body" in judgement.reason
    other = exc("torch._dynamo.exc.UncapturedHigherOrderOpError", text.format("Unsupported method call"), dynamo=True)
    assert oracle.judge(run(calls=[call(result=1)]),
                        compiled_run(calls=[call(exception=other)])).verdict is Verdict.CRASH


def test_a_failing_comptime_assertion_is_the_program_s_check_of_compiler_behaviour():
    claim = replace(exc("AssertionError", "expected static but got dynamic", bases=("AssertionError", "Exception")),
                    dynamo_frame=FrameInfo("torch/_dynamo/comptime.py", 214, "assert_static"))
    judgement = oracle.judge(run(calls=[call(result=1)]), compiled_run(calls=[call(exception=claim)]))
    assert judgement.verdict is Verdict.INVALID and "comptime" in judgement.reason
    internal = replace(claim, dynamo_frame=FrameInfo("torch/_dynamo/symbolic_convert.py", 10, "step"))
    assert oracle.judge(run(calls=[call(result=1)]),
                        compiled_run(calls=[call(exception=internal)])).verdict is Verdict.CRASH


def test_unsupported_without_any_no_break_mode_is_a_crash():
    unsupported = exc(UNSUPPORTED)
    judgement = oracle.judge(run(calls=[call(result=1)]), compiled_run(calls=[call(exception=unsupported)]))
    assert judgement.verdict is Verdict.CRASH


def test_a_dimension_marked_dynamic_that_the_code_specialises_is_documented():
    violated = exc("torch.fx.experimental.symbolic_shapes.ConstraintViolationError", "Constraints violated")
    judgement = oracle.judge(run(calls=[call(result=1)]), compiled_run(calls=[call(exception=violated)]))
    assert judgement.verdict is Verdict.SPECIALIZATION and judgement.key == "constraint violated"


def test_a_recompilation_the_program_asked_dynamo_to_refuse_is_its_own_check_of_compiler_behaviour():
    refused = exc("torch._dynamo.exc.RecompileError", "Recompiling function fn in prog.py:3")
    judgement = oracle.judge(run(calls=[call(result=1)]), compiled_run(calls=[call(exception=refused)]))
    assert judgement.verdict is Verdict.INVALID and "error_on_recompile" in judgement.reason


def test_backend_compiler_failed_is_a_backend_failure():
    failed = exc("torch._dynamo.exc.BackendCompilerFailed", chain=("RuntimeError",))
    judgement = oracle.judge(run(calls=[call(result=1)]), compiled_run(calls=[call(exception=failed)]))
    assert judgement.verdict is Verdict.BACKEND_FAILURE


@pytest.mark.parametrize("outcome,verdict", [
    (Outcome.TIMEOUT, Verdict.HANG),
    (Outcome.SIGNALLED, Verdict.CRASH),
    (Outcome.MEMORY, Verdict.CRASH),
    (Outcome.EXITED, Verdict.CRASH),  # os._exit: no sys.exit code recorded
    (Outcome.LOST, Verdict.UNSTABLE),
])
def test_how_the_compiled_run_ended(outcome, verdict):
    assert oracle.judge(run(), compiled_run(outcome=outcome, detail="x")).verdict is verdict


def test_eager_timeout_is_invalid_not_a_bug():
    assert oracle.judge(run(outcome=Outcome.TIMEOUT), compiled_run()).verdict is Verdict.INVALID


def test_value_mismatch_reports_where():
    judgement = oracle.judge(run(calls=[call(result=tensor([1.0]))]), compiled_run(calls=[call(result=tensor([2.0]))]))
    assert judgement.verdict is Verdict.MISMATCH and judgement.numeric
    assert judgement.divergence.observation == "result" and judgement.reason.startswith("call 1 (fn) result")


def test_stdout_mismatch():
    judgement = oracle.judge(run(text="1\n"), compiled_run(text="2\n"))
    assert judgement.verdict is Verdict.MISMATCH and judgement.divergence.observation == "stdout"


# -- the program's own checks -------------------------------------------------------------

def _stopped(line: int, message: str = "expected 1 frame", *, check: str | None = "compiler",
             type_name: str = "AssertionError", **kwargs):
    return dict(outcome=Outcome.RAISED, uncaught=exc(type_name, message, line=line, check=check), **kwargs)


def test_a_script_whose_eager_run_fails_its_check_of_compiler_behaviour_passes_when_compiled_does():
    calls = [call(result=tensor([1.0]))]
    judgement = oracle.judge(run(calls=calls, **_stopped(9)), compiled_run(calls=calls))
    assert judgement.verdict is Verdict.PASS
    assert "own checks decide" in judgement.reason and "prog.py:9" in judgement.reason


def test_the_same_check_failing_in_both_runs_is_invalid():
    calls = [call(result=tensor([1.0]))]
    judgement = oracle.judge(run(calls=calls, **_stopped(9)), compiled_run(calls=calls, **_stopped(9)))
    assert judgement.verdict is Verdict.INVALID and "fails in both runs" in judgement.reason


def test_a_later_value_check_failing_only_compiled_is_a_mismatch():
    calls = [call(result=tensor([1.0]))]
    judgement = oracle.judge(run(calls=calls, **_stopped(9)),
                             compiled_run(calls=calls, **_stopped(12, "values differ", check="check")))
    assert judgement.verdict is Verdict.MISMATCH and judgement.divergence.observation == "check"
    assert "prog.py:12" in judgement.reason and "prog.py:9" in judgement.reason


def test_an_earlier_compiler_check_failing_compiled_is_invalid_not_the_calls_it_never_made():
    # a frame count that a configuration's graph breaks changed stops the compiled run first
    calls = [call(0, result=tensor([1.0])), call(1, result=tensor([2.0]))]
    judgement = oracle.judge(run(calls=calls, **_stopped(30, "0 != 2")),
                             compiled_run(calls=calls[:1], **_stopped(20, "1 != 0")))
    assert judgement.verdict is Verdict.INVALID and "compiler behaviour" in judgement.reason
    wrong = [call(0, result=tensor([5.0]))]  # what it did compute before stopping still counts
    assert oracle.judge(run(calls=calls, **_stopped(30, "0 != 2")),
                        compiled_run(calls=wrong, **_stopped(20, "1 != 0"))).verdict is Verdict.MISMATCH


def test_a_later_compiler_check_failing_only_compiled_is_invalid_not_a_bug():
    calls = [call(result=tensor([1.0]))]
    judgement = oracle.judge(run(calls=calls, **_stopped(9)), compiled_run(calls=calls, **_stopped(12)))
    assert judgement.verdict is Verdict.INVALID and "compiler behaviour" in judgement.reason


def test_calls_that_disagree_before_the_eager_stop_are_still_a_mismatch():
    judgement = oracle.judge(run(calls=[call(result=tensor([1.0]))], **_stopped(9)),
                             compiled_run(calls=[call(result=tensor([3.0]))]))
    assert judgement.verdict is Verdict.MISMATCH and judgement.divergence.observation == "result"


def test_compiled_calls_after_the_eager_stop_are_not_compared_but_their_crashes_count():
    eager = run(calls=[call(0, result=1)], **_stopped(9), text="a\n")
    later = compiled_run(calls=[call(0, result=1), call(1, result=5)], text="a\nb\n")
    assert oracle.judge(eager, later).verdict is Verdict.PASS
    crashing = compiled_run(calls=[call(0, result=1), call(1, exception=exc("torch._dynamo.exc.InternalTorchDynamoError"))],
                            outcome=Outcome.RAISED, uncaught=exc("torch._dynamo.exc.InternalTorchDynamoError"),
                            uncaught_call=1, text="a\n")
    assert oracle.judge(eager, crashing).verdict is Verdict.CRASH


def test_what_eager_printed_before_its_stop_must_match():
    eager = run(calls=[call(result=1)], **_stopped(9), text="loss 1\n")
    assert oracle.judge(eager, compiled_run(calls=[call(result=1)], text="loss 1\ndone\n")).verdict is Verdict.PASS
    judgement = oracle.judge(eager, compiled_run(calls=[call(result=1)], text="loss 2\ndone\n"))
    assert judgement.verdict is Verdict.MISMATCH and judgement.divergence.observation == "stdout"


def test_the_refusal_a_script_checks_for_is_not_a_finding():
    refused = exc(UNSUPPORTED, gb_type="Failed to trace builtin operator")
    eager = run(calls=[call(result=1)], **_stopped(11, "expected Unsupported"))
    compiled = with_fullgraph(compiled_run(calls=[call(exception=refused)]))
    judgement = oracle.judge(eager, compiled)
    assert judgement.verdict is Verdict.PASS and "expects Dynamo to refuse" in judgement.reason


def test_calls_a_caught_refusal_skipped_have_no_counterpart():
    """`x = fn(a)`, then `with assertRaises(Unsupported): fn(ctx); fn(ctx)`: compiled, the
    second call is refused and the handler skips the third; eager makes all three, then
    fails the check."""
    refused = exc(UNSUPPORTED, gb_type="Unsupported function call")
    eager = run(calls=[call(0, result=1), call(1, result=1), call(2, result=1)],
                **_stopped(20, "Unsupported not raised"))
    judgement = oracle.judge(eager, with_fullgraph(compiled_run(calls=[call(0, result=1), call(1, exception=refused)])))
    assert judgement.verdict is Verdict.PASS and "expects Dynamo to refuse" in judgement.reason
    wrong = [call(0, result=5), call(1, exception=refused)]  # a call before the refusal still counts
    assert oracle.judge(eager, with_fullgraph(compiled_run(calls=wrong))).verdict is Verdict.MISMATCH
    same_course = [call(0, result=1), call(1, exception=refused), call(2, result=7)]  # the handler went on as eager
    assert oracle.judge(eager, with_fullgraph(compiled_run(calls=same_course))).verdict is Verdict.MISMATCH


def test_a_refusal_that_ends_the_compiled_run_is_a_fullgraph_break_not_the_missing_calls_after_it():
    """The eager run stops later at a check of its own; the compiled run dies of Dynamo's
    refusal in its first call, uncaught: the program never expected it."""
    refused = exc(UNSUPPORTED, gb_type="Failed to trace builtin operator")
    eager = run(calls=[call(result=1), call(1, result=1)], **_stopped(11, "expected frame count"))
    compiled = with_fullgraph(compiled_run(calls=[call(exception=refused)], outcome=Outcome.RAISED,
                                           uncaught=refused, uncaught_call=0))
    judgement = oracle.judge(eager, compiled)
    assert judgement.verdict is Verdict.FULLGRAPH_BREAK, judgement.reason


def test_an_error_that_fullgraph_turns_into_the_unsupported_a_test_expects_passes():
    eager = run(outcome=Outcome.RAISED, calls=[call(exception=exc("TypeError"))], uncaught=exc("TypeError"),
                uncaught_call=0)
    observed = exc(UNSUPPORTED, "Observed exception", gb_type="Observed exception")
    judgement = oracle.judge(eager, with_fullgraph(compiled_run(calls=[call(exception=observed)])))
    assert judgement.verdict is Verdict.PASS and "which the program expects and catches" in judgement.reason
    crashed = with_fullgraph(compiled_run(calls=[call(exception=observed)], outcome=Outcome.RAISED,
                                          uncaught=observed, uncaught_call=0))
    assert oracle.judge(eager, crashed).verdict is Verdict.INVALID  # both runs failed in the call


def test_a_refusal_the_program_catches_as_its_own_error_is_a_fullgraph_break_not_the_mismatch_after_it():
    """Eager raised the program's RuntimeError, compiled Dynamo's Unsupported (a RuntimeError):
    one `except RuntimeError` takes both, and what the refused trace never ran differs after."""
    unsupported_bases = ("RuntimeError", "Exception", "BaseException", "object")
    mine = exc("RuntimeError", "positive input", bases=("Exception", "BaseException", "object"))
    refused = exc(UNSUPPORTED, "Data-dependent branching", bases=unsupported_bases, gb_type="Data-dependent branching")
    eager = run(calls=[call(exception=mine)], text="rejected\nseen [3]\n")
    compiled = with_fullgraph(compiled_run(calls=[call(exception=refused)], text="rejected\nseen []\n"))
    judgement = oracle.judge(eager, compiled)
    assert judgement.verdict is Verdict.FULLGRAPH_BREAK, judgement.reason
    assert "caught by the program's own handler" in judgement.reason and "Data-dependent branching" in judgement.reason
    assert judgement.divergence.observation == "stdout"
    # the same refusal where nothing differs afterwards: the program got the error it expects
    assert oracle.judge(eager, with_fullgraph(compiled_run(calls=[call(exception=refused)],
                                                           text="rejected\nseen [3]\n"))).verdict is Verdict.PASS
    # and without a no-graph-break mode an Unsupported escaping is no refusal: the mismatch stays
    plain = compiled_run(calls=[call(exception=refused)], text="rejected\nseen []\n")
    assert oracle.judge(eager, plain).verdict is not Verdict.FULLGRAPH_BREAK


def test_an_assert_dynamo_observed_failing_while_tracing_is_the_program_s_own_check_failing_compiled():
    observed = exc(UNSUPPORTED, "Observed exception", gb_type="Observed exception",
                   chain=("torch._dynamo.exc.ObservedAssertionErrorError",))
    judgement = oracle.judge(run(calls=[call(result=None)]), with_fullgraph(compiled_run(calls=[call(exception=observed)])))
    assert judgement.verdict is Verdict.MISMATCH and judgement.divergence.observation == "check", judgement.reason
    other = exc(UNSUPPORTED, "Observed exception", gb_type="Observed exception",
                chain=("torch._dynamo.exc.ObservedKeyError",))
    judgement = oracle.judge(run(calls=[call(result=None)]), with_fullgraph(compiled_run(calls=[call(exception=other)])))
    assert judgement.verdict is Verdict.FULLGRAPH_BREAK, judgement.reason


def test_what_a_refused_call_printed_eagerly_is_not_compared():
    refused = exc(UNSUPPORTED, gb_type="Failed to trace builtin operator")
    eager = run(calls=[call(result=1)], **_stopped(11, "expected Unsupported"), text="start\nside effect\n")
    compiled = with_fullgraph(compiled_run(calls=[call(exception=refused)], text="start\n"))
    starts_after_start = [replace(c, stdout_at=6) for c in (eager.observation.calls[0], compiled.observation.calls[0])]
    eager = replace(eager, observation=replace(eager.observation, calls=(starts_after_start[0],)))
    compiled = replace(compiled, observation=replace(compiled.observation, calls=(starts_after_start[1],)))
    assert oracle.judge(eager, compiled).verdict is Verdict.PASS


def test_an_own_assert_failing_only_compiled_at_top_level_is_a_mismatch_not_a_crash():
    judgement = oracle.judge(run(calls=[call(result=1)]),
                             compiled_run(calls=[call(result=1)], **_stopped(7, "not close", check="check")))
    assert judgement.verdict is Verdict.MISMATCH and "own check failed only when compiled" in judgement.reason


def test_an_own_assert_inside_the_compiled_call_is_a_mismatch():
    failing = exc("AssertionError", "bad", line=4, check="check")
    judgement = oracle.judge(run(calls=[call(result=1)]), compiled_run(calls=[call(exception=failing)]))
    assert judgement.verdict is Verdict.MISMATCH and judgement.reason.startswith("call 1 (fn)")


def test_a_sys_exit_only_when_compiled_is_the_programs_check_failing():
    judgement = oracle.judge(run(calls=[call(result=1)]),
                             compiled_run(calls=[call(result=1)], outcome=Outcome.EXITED, exit_code=1))
    assert judgement.verdict is Verdict.MISMATCH and judgement.divergence.observation == "exit"


def test_an_error_raised_by_torch_at_program_level_only_when_compiled_is_a_crash():
    judgement = oracle.judge(run(), compiled_run(**_stopped(3, "internal", check=None,
                                                            type_name="torch._dynamo.exc.InternalTorchDynamoError")))
    assert judgement.verdict is Verdict.CRASH


# -- unittest programs ----------------------------------------------------------------------

def _tests(*outcomes):
    return tuple(TestOutcome(name, status, exception) for name, status, exception in outcomes)


def test_unittest_programs_are_judged_test_by_test():
    frame_check = exc("AssertionError", "0 != 1", line=14, check="compiler")
    eager = run(calls=[call(0, result=1, test="T.test_a"), call(1, result=2, test="T.test_b")],
                tests=_tests(("T.test_a", "fail", frame_check), ("T.test_b", "pass", None)),
                outcome=Outcome.EXITED, exit_code=1)
    compiled = compiled_run(calls=[call(0, result=1, test="T.test_a"), call(1, result=2, test="T.test_b")],
                            tests=_tests(("T.test_a", "pass", None), ("T.test_b", "pass", None)), exit_code=0)
    assert oracle.judge(eager, compiled).verdict is Verdict.PASS


def test_a_test_failing_only_compiled_names_the_test():
    value_check = exc("AssertionError", "tensors differ", line=20, check="check")
    eager = run(calls=[call(0, result=1, test="T.test_b")], tests=_tests(("T.test_b", "pass", None)), exit_code=0)
    compiled = compiled_run(calls=[call(0, result=1, test="T.test_b")], tests=_tests(("T.test_b", "fail", value_check)),
                            outcome=Outcome.EXITED, exit_code=1)
    judgement = oracle.judge(eager, compiled)
    assert judgement.verdict is Verdict.MISMATCH and judgement.reason.startswith("test T.test_b:")


# -- graph breaks where the program asked for none ------------------------------------------

NESTED = """
    import torch

    def helper(x):
        print("side effect")
        return x + 1

    @torch.compile(backend="eager")
    def f(x):
        with torch._dynamo.error_on_graph_break(True):
            y = x * 2
            with torch._dynamo.error_on_graph_break(False):
                y = helper(y)
            return y + helper(y)
"""


PLAIN = "import torch\nf = torch.compile(abs)\n"


def _break_at(*lines, dynamo_says=None):
    stack = tuple(FrameInfo(PROGRAM, line, name) for line, name in lines)
    return exc(UNSUPPORTED, gb_type="Failed to trace builtin operator", user_stack=stack,
               error_on_graph_break=dynamo_says)


def _judge_break(unsupported, source=NESTED, **call_kwargs):
    compiled = compiled_run(calls=[call(exception=unsupported, **call_kwargs)])
    return oracle.judge(run(calls=[call(result=1)]), compiled, program=program(source))


def test_a_break_inside_error_on_graph_break_true_is_a_fullgraph_break():
    judgement = _judge_break(_break_at((13, "f"), (4, "helper")))
    assert judgement.verdict is Verdict.FULLGRAPH_BREAK and "prog.py:9" in judgement.reason


def test_a_break_escaping_a_nested_region_that_allows_breaks_is_a_crash():
    judgement = _judge_break(_break_at((12, "f"), (4, "helper"), dynamo_says=True))
    assert judgement.verdict is Verdict.CRASH and "allows graph breaks at prog.py:11" in judgement.reason


def test_error_on_graph_break_around_the_compiled_call_counts():
    judgement = _judge_break(_break_at((4, "helper")), source=PLAIN, error_on_graph_break=True)
    assert judgement.verdict is Verdict.FULLGRAPH_BREAK and "around the compiled call" in judgement.reason


def test_decorators_set_the_mode_for_the_whole_function():
    source = """
        import torch

        @torch._dynamo.error_on_graph_break(False)
        def lenient(x):
            print("ok")
            return x

        @torch._dynamo.error_on_graph_break(True)
        def strict(x):
            print("no")
            return x

        f = torch.compile(lenient)
    """
    assert _judge_break(_break_at((6, "lenient")), source, error_on_graph_break=True).verdict is Verdict.CRASH
    assert _judge_break(_break_at((11, "strict")), source).verdict is Verdict.FULLGRAPH_BREAK


def test_without_explicit_settings_dynamos_own_view_counts():
    assert _judge_break(_break_at((4, "helper"), dynamo_says=True), PLAIN).verdict \
        is Verdict.FULLGRAPH_BREAK
    assert _judge_break(_break_at((4, "helper"), dynamo_says=False), PLAIN).verdict is Verdict.CRASH


def test_fullgraph_takes_precedence_over_a_nested_region_that_allows_breaks():
    compiled = with_fullgraph(compiled_run(calls=[call(exception=_break_at((12, "f"), (4, "helper")))]))
    judgement = oracle.judge(run(calls=[call(result=1)]), compiled, program=program(NESTED))
    assert judgement.verdict is Verdict.FULLGRAPH_BREAK and "fullgraph=True" in judgement.reason


# -- storms and masks ------------------------------------------------------------------------

def test_storms_are_judged_only_when_everything_else_passes():
    recompile = (Recompile("fn@p.py:1", "L['x'] == 1"),)
    calls = [call(0, signature="s"), call(1, signature="s", recompiles=recompile)]
    judgement = oracle.judge(run(calls=calls), compiled_run(calls=calls))
    assert judgement.verdict is Verdict.RECOMPILE_STORM and judgement.key == "repeat:value"


def test_masked_paths_are_not_compared_and_are_listed():
    eager = run(text="tid 17\nloss 1\n")
    compiled = compiled_run(text="tid 99\nloss 1\n")
    assert oracle.judge(eager, compiled).verdict is Verdict.MISMATCH
    judgement = oracle.judge(eager, compiled, mask=frozenset({"stdout line 1"}))
    assert judgement.verdict is Verdict.PASS and judgement.masked == ("stdout line 1",)


def test_run_specific_values_give_a_mask_and_unstable_results_do_not():
    first, second = run(text="tid 17\n"), run(text="tid 23\n")
    assert oracle.run_specific(first, second) == (frozenset({"stdout line 1"}), "")
    calls_a, calls_b = [call(result=tensor([1.0]))], [call(result=tensor([5.0]))]
    mask, unstable = oracle.run_specific(run(calls=calls_a), run(calls=calls_b))
    assert not mask and "call 1 (fn) result" in unstable
    assert "disagree" in oracle.run_specific(first, run(outcome=Outcome.TIMEOUT))[1]


def test_modes_are_not_confused():
    assert run().mode is Mode.EAGER and compiled_run().mode is Mode.COMPILED


def test_storms_are_read_from_the_calls_not_from_run_wide_counters():
    # two instances sharing forward can pass the per-code limit together: only calls say which code object storms
    stats = CompileStats(compiles=9, recompile_limit_hit=True, recompile_reasons=("G['S'] == 7",))
    assert oracle.judge(run(), compiled_run(compile_stats=stats)).verdict is Verdict.PASS


def test_what_the_programs_backend_wrote_in_a_global_is_not_compared_but_the_rest_is():
    def globals_(graph, total):
        return MapValue("dict", (("LAST", graph), ("total", total)))

    eager = run(calls=[call(0, program_state=globals_(None, 3.0))])
    made = OpaqueValue("str", "<written by the program's backend>")
    compiled = compiled_run(calls=[replace(call(0, program_state=globals_(made, 3.0)), compiler_made=("LAST",))])
    judgement = oracle.judge(eager, compiled)
    assert judgement.verdict is Verdict.PASS, judgement.reason
    assert judgement.masked == ("call 1 (fn) program globals after the call['LAST']",)
    wrong = compiled_run(calls=[replace(call(0, program_state=globals_(made, 4.0)), compiler_made=("LAST",))])
    judgement = oracle.judge(eager, wrong)
    assert judgement.verdict is Verdict.MISMATCH and judgement.divergence.where.endswith("['total']")


def test_a_check_the_eager_run_never_reached_is_no_mismatch():
    # a harvested test: eagerly its recording backend has no graphs (IndexError at line 31); compiled,
    # it goes on to a check its mutation broke for both runs (line 32): no eager reference for it
    judgement = oracle.judge(run(calls=[call(result=1)], **_stopped(31, "list index out of range", check=None,
                                                                    type_name="IndexError")),
                             compiled_run(calls=[call(result=1)], **_stopped(32, "None mismatch", check="check")))
    assert judgement.verdict is Verdict.INVALID and "no eager reference" in judgement.reason


def test_a_check_failing_compiled_before_where_the_eager_run_stopped_is_still_a_mismatch():
    # the eager run passed the check at line 12 and stopped later: the check has its reference
    judgement = oracle.judge(run(calls=[call(result=1)], **_stopped(31, "list index out of range", check=None,
                                                                    type_name="IndexError")),
                             compiled_run(calls=[call(result=1)], **_stopped(12, "not close", check="check")))
    assert judgement.verdict is Verdict.MISMATCH and "own check failed only when compiled" in judgement.reason


def test_a_check_the_eager_run_never_reached_may_fail_inside_a_helper_of_the_program():
    from mutator.core.values import ExceptionInfo

    def at(*frames, type_name="AssertionError", check=None) -> ExceptionInfo:
        where = tuple(FrameInfo(PROGRAM, line, function) for line, function in frames)
        return replace(exc(type_name, "x", check=check), frames=where)

    # eagerly: IndexError at line 164 of the test; compiled: past it, then line 165 calls a helper
    # whose assertion (line 118) fails
    eager = run(calls=[call(result=1)], outcome=Outcome.RAISED,
                uncaught=at((190, "<module>"), (164, "test_x"), type_name="IndexError"))
    compiled = compiled_run(calls=[call(result=1)], outcome=Outcome.RAISED,
                            uncaught=at((190, "<module>"), (165, "test_x"), (118, "same"), check="check"))
    assert oracle.judge(eager, compiled).verdict is Verdict.INVALID
    # the same check failing in another test than where the eager run stopped keeps its verdict
    elsewhere = compiled_run(calls=[call(result=1)], outcome=Outcome.RAISED,
                             uncaught=at((191, "<module>"), (20, "test_y"), (118, "same"), check="check"))
    assert oracle.judge(eager, elsewhere).verdict is Verdict.MISMATCH


def test_a_check_after_calls_the_eager_run_never_made_is_no_mismatch():
    # eagerly a frame count fails after call 1 (a check of compiler behaviour, as harvested tests
    # have); compiled, call 2 runs and a value check the mutation broke for both runs fails after it
    calls = [call(0, result=tensor([1.0])), call(1, result=tensor([9.0]))]
    judgement = oracle.judge(run(calls=calls[:1], **_stopped(9, "0 != 2")),
                             compiled_run(calls=calls, **_stopped(14, "not close", check="check")))
    assert judgement.verdict is Verdict.INVALID and "1 call(s)" in judgement.reason
