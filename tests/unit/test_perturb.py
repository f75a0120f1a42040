"""The perturbed compiler state of a confirmation's second eager run (mutator.runtime.perturb),
in this process: what a program reads from each source differs from an unperturbed run, the
objects it holds are the same ones, and everything is as before once the context ends."""

from __future__ import annotations

import collections

import pytest
import torch
from torch._dynamo import testing
from torch._dynamo.utils import counters, get_compilation_metrics
from torch._inductor import metrics

from mutator.core.observation import Mode, RunConfig
from mutator.core.program import Program, ProgramForm
from mutator.runtime.execute import run_program
from mutator.runtime.perturb import MARKER, PERTURBED, perturbed_compiler_state


@pytest.fixture
def frames_counted():
    """Dynamo's counters as a program finds them after some compiling: frames counted, nothing else."""
    saved = {name: dict(category) for name, category in counters.items()}
    counters.clear()
    counters["frames"]["total"] = 2
    counters["frames"]["ok"] = 2
    yield counters["frames"]
    counters.clear()
    for name, content in saved.items():
        counters[name].update(content)


def test_counters_read_otherwise_in_place(frames_counted):
    held = counters["frames"]  # as `frames = counters["frames"]` binds it before the run
    with perturbed_compiler_state():
        assert counters["frames"] is held
        assert held["total"] == 2 + PERTURBED and held.get("ok", 0) == 2 + PERTURBED
        assert held["never_counted"] == PERTURBED  # a missing key reads nonzero, without being added
        assert sorted(held.items()) == [(MARKER, PERTURBED), ("ok", 2 + PERTURBED), ("total", 2 + PERTURBED)]
        assert sum(counters["stats"].values()) == PERTURBED  # a category first read in the run
        assert MARKER in counters and len(counters) == 3


def test_counters_stay_perturbed_after_the_program_clears_them(frames_counted):
    with perturbed_compiler_state():
        counters.clear()  # torch._dynamo.test_case.TestCase.setUp does this
        assert dict(counters["frames"]) == {MARKER: PERTURBED}
        assert counters["frames"]["total"] == PERTURBED
        counters["graph_break"].clear()
        assert len(counters["graph_break"]) == 1
        counters["frames"]["total"] += 1  # as Dynamo counts
        assert counters["frames"]["total"] == PERTURBED + 1


def test_counters_are_as_before_after_the_context(frames_counted):
    held = counters["frames"]
    with perturbed_compiler_state():
        counters["frames"]["total"] += 5
        counters["inductor"]["fusions"] += 1
    assert counters.default_factory is collections.Counter
    assert dict(counters) == {"frames": collections.Counter(total=2, ok=2)}
    assert counters["frames"] is held and type(held) is collections.Counter
    assert held["missing"] == 0


@pytest.mark.parametrize("make", [testing.CompileCounter, lambda: testing.CompileCounterWithBackend("eager")],
                         ids=["CompileCounter", "CompileCounterWithBackend"])
def test_compile_counters_start_at_the_perturbed_count(make):
    with perturbed_compiler_state():
        counter = make()
        assert (counter.frame_count, counter.op_count) == (PERTURBED, PERTURBED)
        counter.frame_count += 1
        counter.clear()
        assert (counter.frame_count, counter.op_count) == (PERTURBED, PERTURBED)
    fresh = make()
    assert (fresh.frame_count, fresh.op_count) == (0, 0)


def test_compile_counter_counts_on_from_the_perturbed_start():
    with perturbed_compiler_state():
        counter = testing.CompileCounter()
        compiled = torch.compile(lambda x: x.sin() + 1, backend=counter)
        compiled(torch.ones(3))
        assert counter.frame_count == PERTURBED + 1
    torch._dynamo.reset()


def test_compilation_metrics_have_one_more_readable_entry():
    before = len(get_compilation_metrics())
    with perturbed_compiler_state():
        listed = get_compilation_metrics()
        assert len(listed) == before + 1
        newest = listed[-1]
        assert newest.co_name == MARKER and newest.guard_count == PERTURBED
        assert newest.entire_frame_compile_time_s == float(PERTURBED) and newest.fail_type is None
    assert len(get_compilation_metrics()) == before


def test_inductor_metrics_read_otherwise_even_after_reset():
    metrics.reset()
    with perturbed_compiler_state():
        assert metrics.generated_kernel_count == PERTURBED
        metrics.reset()
        assert metrics.generated_kernel_count == PERTURBED and metrics.nodes_num_elem == []
    assert metrics.generated_kernel_count == 0
    metrics.reset()
    assert metrics.generated_kernel_count == 0


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
