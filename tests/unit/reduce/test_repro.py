"""Reproducers of every finding kind, as generated source (no torch, nothing run): which
forms each kind gets and in what order, what they count or time, the configuration lines."""

from __future__ import annotations

import pytest

from mutator.core.program import Program
from mutator.reduce.repro import control_of, make_repros, missing
from mutator.reduce.repro_facts import ReproFacts
from mutator.reduce.repro_source import surfacing_internal_errors
from mutator.core.verdict import Verdict

from tests.unit.reduce.helpers import HARNESS, harness


SCRIPT = '''\
"""A script."""
from __future__ import annotations

import torch

opt = torch.compile(lambda x: x + 1, backend="eager")
print(opt(torch.ones(2)))
'''
CONFIG = (("torch._dynamo.config.capture_scalar_outputs", "True"), ("torch._inductor.config.freezing", "True"))


def script() -> Program:
    return Program.from_source(SCRIPT, "s.py")


def parses(source: str) -> None:
    compile(source, "repro.py", "exec")
    compile(control_of(source), "control.py", "exec")


@pytest.mark.parametrize("verdict", [v for v in Verdict if v.is_finding])
def test_every_finding_kind_gets_a_reproducer_in_either_form(verdict: Verdict):
    facts = ReproFacts(repeats=((3, 1),), limit_hit=True)
    for program in (harness(), script()):
        repros = make_repros(program, verdict, facts=facts)
        assert repros, (verdict, program.form)
        for source in repros:
            parses(source)


def test_a_storm_counts_compilations_on_the_calls_that_repeat_a_state():
    [source] = make_repros(harness(), Verdict.RECOMPILE_STORM, facts=ReproFacts(repeats=((3, 1), (4, 2))))
    assert "REPEATS = {3: 1, 4: 2}" in source and 'counters["frames"]["total"]' in source
    assert "# Fixed: a call that repeats an earlier call's state" in source
    footer = source.split("# ---- reproducer", 1)[1]
    assert footer.index("torch.compile = _counting(torch.compile)") < footer.index("drive(torch.compile(fn")
    assert footer.rstrip().endswith("assert not failure, failure")


def test_a_storm_without_the_calls_that_repeat_gets_none_and_says_why():
    assert make_repros(harness(), Verdict.RECOMPILE_STORM, facts=ReproFacts()) == []
    assert "which call repeated" in missing(Verdict.RECOMPILE_STORM, ReproFacts())


def test_specialisation_at_the_recompile_limit_counts_it_and_one_refused_as_dynamic_compares_values():
    [source] = make_repros(harness(), Verdict.SPECIALIZATION, facts=ReproFacts(limit_hit=True))
    assert 'message.startswith("Dynamo recompile limit exceeded")' in source and "REPEATS" not in source
    refused = make_repros(harness(), Verdict.SPECIALIZATION, facts=ReproFacts())
    assert len(refused) == 4 and "_same(expected, actual)" in refused[1]


def test_a_script_is_counted_from_its_first_line_and_checked_at_exit():
    [source] = make_repros(script(), Verdict.SPECIALIZATION, facts=ReproFacts(limit_hit=True))
    lines = source.splitlines()
    assert lines[:3] == ['"""A script."""', "from __future__ import annotations", "# ---- reproducer: counts what "
                         "Dynamo compiles during each call; exits 1 while Dynamo hits its recompile limit ----"]
    assert source.index("atexit.register(_exit_check)") < source.index("opt = torch.compile(")
    assert "os._exit(1)" in source


def test_a_hang_runs_the_compiled_side_under_a_time_limit_in_a_child_process():
    [source] = make_repros(harness(), Verdict.HANG)
    assert "FACTOR, MARGIN = 10.0, 30.0" in source and '_side("compiled", scratch, timeout=limit)' in source
    assert "except subprocess.TimeoutExpired:" in source
    [scripted] = make_repros(script(), Verdict.HANG)
    assert scripted.index('"REPRO_SIDE" not in os.environ') < scripted.index("opt = torch.compile(")


def test_value_kinds_try_the_short_form_then_the_long_one_then_fresh_processes():
    short, long, fresh, calls = make_repros(harness(), Verdict.MISMATCH)
    assert len(short) < len(long) and "each in a fresh process" in fresh
    assert 'observed["result"] = drive(f)' in fresh and '"globals": _program_data()' in fresh
    assert "vars(value).items()" in fresh  # objects' attributes are compared
    parses(calls)  # last: each call inside drive() compared too, where drive() does not return it
    assert "_Calls" not in fresh and calls.index("f = _Calls(f)") < calls.index('observed["result"] = drive(f)')
    assert 'observed["calls"] = f.results' in calls and "each in a fresh process" in calls
    no_drive = Program.from_source(HARNESS.split("\n\ndef drive")[0] + "\n", "nd.py")
    assert 'observed["args"] = args' in make_repros(no_drive, Verdict.CRASH)[-1]


def test_every_form_sets_the_configuration_the_program_ran_under_before_it_compiles():
    facts = ReproFacts(repeats=((2, 1),), limit_hit=True, config=CONFIG)
    for verdict in (Verdict.MISMATCH, Verdict.HANG, Verdict.RECOMPILE_STORM, Verdict.SPECIALIZATION):
        for source in make_repros(harness(), verdict, facts=facts):
            assert "import torch._inductor.config\n" in source
            at = source.index("torch._dynamo.config.capture_scalar_outputs = True")
            assert source.index("torch._inductor.config.freezing = True") > at
            assert at < source.index("torch.compile(fn"), verdict
    with_config, plain = make_repros(script(), Verdict.MISMATCH, facts=facts)
    assert plain == SCRIPT and with_config.index("capture_scalar_outputs = True") < with_config.index("opt = ")
    assert "capture_scalar_outputs" not in make_repros(harness(), Verdict.MISMATCH)[0]


def test_an_internal_error_the_program_may_catch_gets_a_last_form_that_fails_when_one_was_raised():
    for program in (harness(), script()):
        plain = make_repros(program, Verdict.CRASH)
        repros = make_repros(program, Verdict.CRASH, facts=ReproFacts(internal_error=True))
        assert repros[:-1] == plain  # tried first: where the program does not catch it they show it already
        surfacing = repros[-1]
        parses(surfacing)
        assert surfacing == surfacing_internal_errors(plain[0])  # the shortest form, with the prelude
        assert surfacing.index("InternalTorchDynamoError.__init__ = _record_internal_error") < \
            surfacing.index("torch.compile(") and "_os._exit(1)" in surfacing
    script_form = make_repros(script(), Verdict.CRASH, facts=ReproFacts(internal_error=True))[-1]
    assert script_form.index("from __future__ import annotations") < script_form.index("import atexit as _atexit")


@pytest.mark.parametrize("verdict", [Verdict.MISMATCH, Verdict.CRASH, Verdict.HANG, Verdict.SPECIALIZATION])
def test_a_program_the_reduction_left_without_import_torch_still_gets_its_reproducers(verdict: Verdict):
    # seen on a reduced crash of a 20-minute campaign: fn builds a dict from ints, no torch left
    bare = Program.from_source("def fn(x):\n    return {n: x for n in 'ab'}\n\n\ndef inputs():\n    return (1,)\n",
                               "bare.py")
    repros = make_repros(bare, verdict, facts=ReproFacts(limit_hit=True))
    assert repros
    for repro in repros:
        compile(repro, "repro.py", "exec")
        assert "import torch" in repro


def test_a_configuration_is_set_with_what_it_is_and_the_programs_own_changes_apart():
    from mutator.reduce.repro_source import config_lines

    lines = config_lines((("torch._dynamo.config.nested_graph_breaks", "True"),
                          ("torch._dynamo.config.recompile_limit", "2"))).splitlines()
    assert lines[0] == "import torch._dynamo.config"
    assert lines[1].startswith("# the configuration 'nested-graph-breaks': nested graph breaks, off by default")
    assert lines[2] == "torch._dynamo.config.nested_graph_breaks = True"
    assert lines[3] == "# the compiler configuration the program ran under (it sets it itself)"
    assert lines[4] == "torch._dynamo.config.recompile_limit = 2"
    for source in make_repros(harness(), Verdict.CRASH,
                              facts=ReproFacts(config=(("torch._dynamo.config.nested_graph_breaks", "True"),))):
        assert source.index("nested_graph_breaks = True") < source.index("torch.compile(fn")


def test_a_diverging_tensor_type_is_asserted_exactly_by_the_short_form():
    from tests.helpers import tensor

    typed = make_repros(harness(), Verdict.MISMATCH, observation="result:type:Tensor", result=tensor([1.0]))[0]
    assert "torch.testing.assert_close(actual, expected, equal_nan=True, allow_subclasses=False)" in typed
    valued = make_repros(harness(), Verdict.MISMATCH, observation="result:value:Tensor", result=tensor([1.0]))[0]
    assert "torch.testing.assert_close(actual, expected, equal_nan=True)\n" in valued
