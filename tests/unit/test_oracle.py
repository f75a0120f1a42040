from dataclasses import replace

import pytest

from mutator.observation import CompileStats, Mode, Outcome, Recompile
from mutator.oracle import Oracle, recompile_storm
from mutator.verdict import Verdict

from tests.helpers import call, compiled_run, exc, run, tensor, with_fullgraph

oracle = Oracle()
DYNAMO_BASES = ("torch._dynamo.exc.TorchDynamoException", "RuntimeError", "Exception")


def test_verdict_order_and_kinds():
    assert list(Verdict) == sorted(Verdict)
    assert not Verdict.UNSTABLE.is_finding and Verdict.MISMATCH.is_finding
    assert Verdict.RECOMPILE_STORM.is_frontend_bug and not Verdict.BACKEND_FAILURE.is_frontend_bug


def test_equal_runs_pass():
    calls = [call(result=tensor([1.0]))]
    assert oracle.judge(run(calls=calls), compiled_run(calls=calls)).verdict is Verdict.PASS


def test_both_raising_is_invalid_and_keeps_both_types():
    eager = run(outcome=Outcome.RAISED, uncaught=exc("ValueError"))
    compiled = compiled_run(outcome=Outcome.RAISED, uncaught=exc("torch._dynamo.exc.TorchRuntimeError"))
    judgement = oracle.judge(eager, compiled)
    assert judgement.verdict is Verdict.INVALID
    assert judgement.eager_exception.type_name == "ValueError"
    assert judgement.exception.type_name == "torch._dynamo.exc.TorchRuntimeError"


def test_compiled_swallowing_eagers_error_is_a_mismatch():
    eager = run(outcome=Outcome.RAISED, uncaught=exc("KeyError"), detail="raised KeyError: boom")
    judgement = oracle.judge(eager, compiled_run())
    assert judgement.verdict is Verdict.MISMATCH and "compiled run completed" in judgement.reason


def test_compiled_call_raising_what_eager_did_not_is_a_crash():
    eager = run(calls=[call(result=tensor([1.0]))])
    compiled = compiled_run(calls=[call(exception=exc("torch._dynamo.exc.InternalTorchDynamoError", dynamo=True))],
                            outcome=Outcome.RAISED, uncaught=exc("torch._dynamo.exc.InternalTorchDynamoError"))
    judgement = oracle.judge(eager, compiled)
    assert judgement.verdict is Verdict.CRASH and "symbolic_convert.py" in judgement.reason


def test_dynamo_assertion_error_is_a_crash_recognised_by_its_frame():
    eager = run(calls=[call(result=1)])
    compiled = compiled_run(calls=[call(exception=exc("AssertionError", dynamo=True))])
    judgement = oracle.judge(eager, compiled)
    assert judgement.verdict is Verdict.CRASH and judgement.exception.in_dynamo


def test_unsupported_under_fullgraph_is_a_fullgraph_break():
    unsupported = exc("torch._dynamo.exc.Unsupported", gb_type="Failed to trace builtin operator")
    compiled = with_fullgraph(compiled_run(calls=[call(exception=unsupported)]))
    judgement = oracle.judge(run(calls=[call(result=1)]), compiled)
    assert judgement.verdict is Verdict.FULLGRAPH_BREAK and "Failed to trace builtin operator" in judgement.reason


def test_an_explicit_graph_break_under_fullgraph_is_the_program_asking_for_both():
    unsupported = exc("torch._dynamo.exc.Unsupported", gb_type="Call to `torch._dynamo.graph_break()`")
    compiled = with_fullgraph(compiled_run(calls=[call(exception=unsupported)]))
    judgement = oracle.judge(run(calls=[call(result=1)]), compiled)
    assert judgement.verdict is Verdict.INVALID and "graph_break()" in judgement.reason


def test_unsupported_without_fullgraph_is_a_crash():
    unsupported = exc("torch._dynamo.exc.Unsupported")
    judgement = oracle.judge(run(calls=[call(result=1)]), compiled_run(calls=[call(exception=unsupported)]))
    assert judgement.verdict is Verdict.CRASH


def test_backend_compiler_failed_is_a_backend_failure():
    failed = exc("torch._dynamo.exc.BackendCompilerFailed", chain=("RuntimeError",))
    judgement = oracle.judge(run(calls=[call(result=1)]), compiled_run(calls=[call(exception=failed)]))
    assert judgement.verdict is Verdict.BACKEND_FAILURE


@pytest.mark.parametrize("outcome,verdict", [
    (Outcome.TIMEOUT, Verdict.HANG),
    (Outcome.SIGNALLED, Verdict.CRASH),
    (Outcome.MEMORY, Verdict.CRASH),
    (Outcome.EXITED, Verdict.CRASH),
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


def test_recompile_limit_is_a_storm():
    stats = CompileStats(compiles=9, recompile_limit_hit=True, recompile_reasons=("G['S'] == 7",))
    judgement = oracle.judge(run(), compiled_run(compile_stats=stats))
    assert judgement.verdict is Verdict.RECOMPILE_STORM and "G['S'] == 7" in judgement.reason


def _storm_calls(signatures, exacts, recompiled):
    return [call(i, signature=s, exact=e, recompiles=(Recompile("fn@p.py:1", "x == 1"),) if r else ())
            for i, (s, e, r) in enumerate(zip(signatures, exacts, recompiled))]


def test_recompiling_on_identical_inputs_and_state_is_a_storm():
    # 2 calls with equal inputs and 2 compiles: the second compile is not warranted
    calls = _storm_calls(["m", "m"], ["v", "v"], [False, True])
    assert "same inputs and state" in recompile_storm(compiled_run(calls=calls).observation)


def test_recompiling_after_a_dynamo_reset_is_warranted():
    calls = _storm_calls(["m", "m"], ["v", "v"], [False, True])
    calls[1] = replace(calls[1], resets=1)
    assert recompile_storm(compiled_run(calls=calls).observation) == ""


def test_recompiling_on_new_inputs_is_warranted():
    calls = _storm_calls(["m1", "m2", "m3"], ["v1", "v2", "v3"], [False, True, True])
    assert recompile_storm(compiled_run(calls=calls).observation) == ""


def test_data_dependent_recompiles_need_several_on_one_code_object():
    two = _storm_calls(["m"] * 3, ["v1", "v2", "v3"], [False, True, True])
    three = _storm_calls(["m"] * 4, ["v1", "v2", "v3", "v4"], [False, True, True, True])
    assert recompile_storm(compiled_run(calls=two).observation) == ""
    assert "recompiled 3 times" in recompile_storm(compiled_run(calls=three).observation)


def test_same_eager_detects_disagreeing_eager_runs():
    first = run(calls=[call(result=tensor([1.0]))])
    second = run(calls=[call(result=tensor([5.0]))])
    assert oracle.same_eager(first, first) is None
    assert "first eager run" in oracle.same_eager(first, second).detail
    assert oracle.same_eager(first, run(outcome=Outcome.TIMEOUT)).aspect == "outcome"


def test_modes_are_not_confused():
    assert run().mode is Mode.EAGER and compiled_run().mode is Mode.COMPILED
