"""The facts a reproducer is made from, taken from a finding's runs."""

from __future__ import annotations

from mutator.core.observation import CallRecord, Observation, Recompile
from mutator.core.verdict import Verdict
from mutator.reduce.repro_facts import ReproFacts, config_of, limit_hit, repeats

from tests.unit.reduce.helpers import harness


def test_facts_say_whether_the_crash_is_dynamo_s_internal_error():
    from mutator.judge.check import CheckResult
    from mutator.judge.oracle import Judgement
    from tests.helpers import compiled_run, exc, run

    def facts(type_name: str) -> ReproFacts:
        crash = Judgement(Verdict.CRASH, "raised", exception=exc(type_name))
        return ReproFacts.of(CheckResult(harness(), crash, (run(), compiled_run())))

    assert facts("torch._dynamo.exc.InternalTorchDynamoError").internal_error
    assert not facts("torch._dynamo.exc.Unsupported").internal_error


def call(index: int, signature: str, *recompiles: Recompile, config: tuple[tuple[str, str], ...] = (),
         resets: int = 0) -> CallRecord:
    return CallRecord(index=index, label="fn", args=None, kwargs=None, signature=signature,
                      exact_signature=signature, recompiles=recompiles, entry_code="fn@p.py:3", config=config,
                      resets=resets)


def test_facts_name_the_calls_that_recompiled_on_a_repeated_state_as_the_oracle_does():
    value = Recompile("fn@p.py:3", "L['k'] == 1")
    identity = Recompile("fn@p.py:3", "___check_obj_id(L['m'], 1234)")
    observation = Observation(calls=(
        call(0, "a"), call(1, "b", value), call(2, "a", value),  # a real repeat of call 1
        call(3, "b", identity),  # a fresh object's identity: documented
        call(4, "a", value, resets=1),  # after torch._dynamo.reset(): compiling again is expected
    ))
    assert repeats(observation) == ((3, 1),)


def test_facts_say_whether_the_limit_was_hit_unless_the_program_lowered_it():
    hit = Recompile("fn@p.py:3", "L['k'] == 8", limit=True)
    lowered = Recompile("fn@p.py:3", "L['k'] == 2", limit=True, lowered=True)
    assert limit_hit(Observation(calls=(call(0, "a", hit),)))
    assert not limit_hit(Observation(calls=(call(0, "a", lowered),)))


def test_facts_keep_each_configuration_entry_at_its_first_value():
    observation = Observation(calls=(call(0, "a"), call(1, "b", config=(("m.x", "True"),)),
                                     call(2, "c", config=(("m.x", "False"), ("m.y", "3")))))
    assert config_of(observation) == (("m.x", "True"), ("m.y", "3"))


def test_facts_set_the_checks_configuration_first_and_what_the_program_changed_wins():
    observation = Observation(calls=(call(0, "a", config=(("torch._dynamo.config.automatic_dynamic_shapes", "True"),
                                                          ("m.y", "3"))),))
    assert config_of(observation, "dynamic") == (("m.y", "3"),
                                                 ("torch._dynamo.config.assume_static_by_default", "False"),
                                                 ("torch._dynamo.config.automatic_dynamic_shapes", "True"))
    assert config_of(Observation(), "nested-graph-breaks") == (("torch._dynamo.config.nested_graph_breaks", "True"),)
