"""The perturbed compiler state of a confirmation's second eager run (mutator.runtime.perturb),
in this process: what a program reads from each source differs from an unperturbed run
however the program reset that state first, the objects it holds are the same ones, and
everything is as before once the context ends.

A program reads the counters as it would in a run: through `torch._dynamo.utils` (what
`from torch._dynamo.utils import counters` binds when the program runs, inside the
context), not through a binding this test module made at its import."""

from __future__ import annotations

import collections
import copy
import json

import pytest
import torch
from torch._dynamo import testing, utils
from torch._inductor import metrics

from mutator.core.observation import Mode, RunConfig
from mutator.core.program import Program, ProgramForm
from mutator.runtime import perturb
from mutator.runtime.execute import run_program
from mutator.runtime.perturb import MARKER, PERTURBED, perturbed_compiler_state

REAL_COUNTERS = utils.counters


@pytest.fixture
def nothing_counted():
    """Dynamo's counters as an eager run finds them: the worker cleared them after warming up,
    and nothing compiles eagerly."""
    saved = {name: dict(category) for name, category in REAL_COUNTERS.items()}
    REAL_COUNTERS.clear()
    yield REAL_COUNTERS
    REAL_COUNTERS.clear()
    for name, content in saved.items():
        REAL_COUNTERS[name].update(content)


@pytest.fixture
def frames_counted():
    """Dynamo's counters as a program finds them after some compiling: frames counted, nothing else."""
    saved = {name: dict(category) for name, category in REAL_COUNTERS.items()}
    REAL_COUNTERS.clear()
    REAL_COUNTERS["frames"]["total"] = 2
    REAL_COUNTERS["frames"]["ok"] = 2
    yield REAL_COUNTERS["frames"]
    REAL_COUNTERS.clear()
    for name, content in saved.items():
        REAL_COUNTERS[name].update(content)


def test_counters_read_otherwise_through_what_a_program_imports(frames_counted):
    with perturbed_compiler_state():
        from torch._dynamo.utils import counters

        assert counters["frames"] is frames_counted  # the object a program may already hold
        held = counters["frames"]
        assert held["total"] == 2 + PERTURBED and held.get("ok", 0) == 2 + PERTURBED
        assert held["never_counted"] == PERTURBED and held.get("never_counted", 0) == PERTURBED
        assert "never_counted" not in dict.keys(held)  # read, not added
        assert sorted(held.items()) == [(MARKER, PERTURBED), ("ok", 2 + PERTURBED), ("total", 2 + PERTURBED)]
        assert json.loads(json.dumps(counters))["frames"]["total"] == 2 + PERTURBED
        assert sum(counters["stats"].values()) == PERTURBED  # a category first read in the run
        assert MARKER in counters and "anything" in counters and len(counters) == 3
        counters["frames"]["total"] += 1  # as Dynamo counts: the read is offset, the write kept
        assert dict.get(held, "total") == 3 + PERTURBED


# How a program resets the compiler state before it reads it (in the run, through utils.counters).
RESETS = {
    "nothing": lambda: None,
    "counters.clear()": lambda: utils.counters.clear(),
    "counters[k].clear()": lambda: utils.counters["frames"].clear(),
    "del counters[k]": lambda: (utils.counters["frames"], utils.counters.__delitem__("frames")),
    "counters.pop(k)": lambda: utils.counters.pop("frames", None),
    "counters[k][key] = 0": lambda: utils.counters["frames"].__setitem__("total", 0),
    "torch._dynamo.reset()": lambda: torch._dynamo.reset(),
    "reset(), then clear()": lambda: (torch._dynamo.reset(), utils.counters.clear()),
}
# What a program derives from the counters and keeps (each read anew from torch._dynamo.utils).
READS = {
    "[k][key]": lambda c: c["frames"]["total"],
    "[k].get(key, 0)": lambda c: c["frames"].get("total", 0),
    "get(k, {}).items()": lambda c: tuple(sorted(c.get("frames", {}).items())),
    "get(k)": lambda c: c.get("graph_break"),
    "len([k])": lambda c: len(c["graph_break"]),
    "len()": lambda c: len(c),
    "iteration": lambda c: sorted(name for name in c),
    ".items()": lambda c: sorted((name, sum(category.values())) for name, category in c.items()),
    "in": lambda c: "graph_break" in c,
    "key in [k]": lambda c: "ok" in c["frames"],
    "dict([k])": lambda c: dict(c["frames"]),
    "[k] == {}": lambda c: c["unimplemented"] == {},
    "bool([k])": lambda c: bool(c["unimplemented"]),
    "[k].total()": lambda c: c["frames"].total(),
    "[k].most_common()": lambda c: c["frames"].most_common(1),
    "repr": lambda c: repr(c["frames"]),
    "json": lambda c: json.dumps(c, sort_keys=True),
    "copy": lambda c: dict(copy.deepcopy(c)),
}


def _after(reset, read):
    reset()
    return read(utils.counters)


@pytest.mark.parametrize("read", READS.values(), ids=READS.keys())
@pytest.mark.parametrize("reset", RESETS.values(), ids=RESETS.keys())
def test_what_a_program_derives_from_the_counters_differs_however_it_reset_them(nothing_counted, reset, read):
    unperturbed = _after(reset, read)
    with perturbed_compiler_state():
        perturbed = _after(reset, read)
    assert perturbed != unperturbed


# Whether something was counted: in the perturbed run, always (the value of a reset that left it
# so, `"frames" in counters` after `counters["frames"].clear()`, is the same in every run).
PRESENCE = {
    "in": (lambda c: "frames" in c, True),
    "key in [k]": (lambda c: "total" in c["frames"], True),
    "[k] == {}": (lambda c: c["frames"] == {}, False),
    "{} == [k]": (lambda c: {} == c["frames"], False),
    "bool([k])": (lambda c: bool(c["frames"]), True),
    "not [k]": (lambda c: not c.get("frames"), False),
}


@pytest.mark.parametrize("read, counted", PRESENCE.values(), ids=PRESENCE.keys())
@pytest.mark.parametrize("reset", RESETS.values(), ids=RESETS.keys())
def test_the_counters_read_as_counted_however_they_were_reset(nothing_counted, reset, read, counted):
    with perturbed_compiler_state():
        assert _after(reset, read) is counted


def test_counters_are_as_before_after_the_context(frames_counted):
    with perturbed_compiler_state():
        utils.counters["frames"]["total"] += 5
        utils.counters["inductor"]["fusions"] += 1
        utils.counters.clear()
    assert utils.counters is REAL_COUNTERS and REAL_COUNTERS.default_factory is collections.Counter
    assert dict(REAL_COUNTERS) == {"frames": collections.Counter(total=2, ok=2)}
    assert REAL_COUNTERS["frames"] is frames_counted and type(frames_counted) is collections.Counter
    assert frames_counted["missing"] == 0


def test_a_copy_of_the_counters_is_plain_data_of_what_they_read(frames_counted):
    with perturbed_compiler_state():
        taken = utils.counters.copy()
        category = utils.counters["frames"].copy()
    assert type(taken) is collections.defaultdict and type(taken["frames"]) is collections.Counter
    assert taken["frames"]["total"] == 2 + PERTURBED and taken["frames"]["never"] == 0
    assert type(category) is collections.Counter and category[MARKER] == PERTURBED


class _OwnCounter(testing.CompileCounter):
    """A program's counter that sets its counts itself, without CompileCounter.__init__."""

    def __init__(self):
        self.frame_count = 0
        self.op_count = 0


def _zeroed(counter):
    counter.frame_count = 0
    return counter


def _cleared(counter):
    counter.frame_count += 3
    counter.clear()
    return counter


COUNTERS = {
    "CompileCounter()": testing.CompileCounter,
    "CompileCounterWithBackend": lambda: testing.CompileCounterWithBackend("eager"),
    "clear()": lambda: _cleared(testing.CompileCounter()),
    "frame_count = 0": lambda: _zeroed(testing.CompileCounter()),
    "a subclass": _OwnCounter,
}


@pytest.mark.parametrize("make", COUNTERS.values(), ids=COUNTERS.keys())
def test_compile_counters_read_otherwise_however_made_or_reset(make):
    with perturbed_compiler_state():
        counter = make()
        assert (counter.frame_count, counter.op_count) == (PERTURBED, PERTURBED)
    fresh = make()
    assert (fresh.frame_count, fresh.op_count) == (0, 0)
    assert (counter.frame_count, counter.op_count) == (0, 0)  # what it held, once the context ends


def test_compile_counter_counts_on_and_still_reads_otherwise():
    unperturbed = testing.CompileCounter()
    torch.compile(lambda x: x.sin() + 1, backend=unperturbed)(torch.ones(3))
    torch._dynamo.reset()
    with perturbed_compiler_state():
        counter = testing.CompileCounter()
        torch.compile(lambda x: x.sin() + 1, backend=counter)(torch.ones(3))
        assert counter.frame_count > PERTURBED and counter.frame_count != unperturbed.frame_count
    torch._dynamo.reset()


def test_compilation_metrics_have_one_more_readable_entry_cleared_or_not():
    before = len(utils.get_compilation_metrics())
    with perturbed_compiler_state():
        listed = utils.get_compilation_metrics()
        assert len(listed) == before + 1
        marker = listed[0]
        assert marker.co_name == MARKER and marker.guard_count == PERTURBED
        assert marker.entire_frame_compile_time_s == float(PERTURBED) and marker.fail_type is None
        utils.clear_compilation_metrics()
        assert utils.get_compilation_metrics() == [marker]  # the newest, when nothing compiled
        counted = len(utils.get_compilation_metrics())  # as the Session counts what a call compiled
        torch.compile(lambda x: x * 2, backend="eager")(torch.ones(2))
        assert [m.co_name for m in utils.get_compilation_metrics()[counted:]] == ["<lambda>"]
    assert all(m.co_name != MARKER for m in utils.get_compilation_metrics())
    torch._dynamo.reset()


def test_inductor_metrics_read_otherwise_reset_or_set():
    metrics.reset()
    with perturbed_compiler_state():
        assert metrics.generated_kernel_count == PERTURBED
        metrics.reset()
        assert metrics.generated_kernel_count == PERTURBED and metrics.nodes_num_elem == []
        metrics.generated_kernel_count = 0
        assert metrics.generated_kernel_count == PERTURBED
        from torch._inductor.metrics import num_bytes_accessed

        assert num_bytes_accessed == PERTURBED
    assert metrics.generated_kernel_count == 0 and type(metrics).__name__ == "module"


def test_every_hook_is_there_on_this_torch():
    assert perturb.unavailable() == ()


def test_a_hook_this_torch_lacks_is_named(monkeypatch):
    monkeypatch.delattr(testing, "CompileCounterWithBackend")
    monkeypatch.setattr(utils, "get_compilation_metrics", None)
    assert perturb.unavailable() == ("torch._dynamo.testing.CompileCounterWithBackend (not perturbed)",
                                     "torch._dynamo.utils.get_compilation_metrics (not perturbed)")
    with perturbed_compiler_state():  # and the perturbation does what it still can
        assert testing.CompileCounter().frame_count == PERTURBED


COPIES_COUNTERS = """
import torch
from torch._dynamo.utils import counters
from torch._dynamo.testing import CompileCounter
torch._dynamo.reset()
counters.clear()
cnt = CompileCounter()
torch.compile(lambda x: x + 1, backend=cnt)(torch.ones(2))
values = (tuple(sorted(counters["frames"].items())), cnt.frame_count)
print(values)
"""


def test_run_program_perturbs_an_eager_run_only_when_asked():
    program = Program(COPIES_COUNTERS, ProgramForm.SCRIPT, "copies.py")
    printed = {(mode, perturb): run_program(program, mode, RunConfig(perturb_compiler_state=perturb),
                                            lambda _: None).stdout.head
               for mode in (Mode.EAGER, Mode.COMPILED) for perturb in (False, True)}
    assert printed[(Mode.EAGER, True)] == f"((('{MARKER}', {PERTURBED}),), {PERTURBED})\n"
    assert printed[(Mode.EAGER, False)] == "((), 0)\n"
    assert printed[(Mode.COMPILED, False)] == printed[(Mode.COMPILED, True)] == "((('ok', 1), ('total', 1)), 1)\n"
    torch._dynamo.reset()
