""""What matters" names the construct a bug needs and says the padding does not matter.

Three bugs of Dynamo (live on torch 2.13 and 2.14), each in a program of ours padded with
a construct that has nothing to do with it (a filtered generator, `functools.wraps`,
`vmap`): after the reduction and the probes, the report's section and title must name
what the bug needs and list the padding as not needed (whether the reduction took it out
or a probe showed it does not matter), and the reduced program must not keep what the
line on what matters lists as not needed (the reduction takes what its analysis proved)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutator.findings.finding import Finding
from mutator.core.observation import RunConfig
from mutator.findings.readme import matters_summary
from mutator.reduce import matters
from mutator.reduce.constructs import constructs
from mutator.reduce.driver import ReductionReport, ReduceDriver
from mutator.report.issue import report_markdown, title

pytestmark = pytest.mark.quality

PROGRAMS = Path(__file__).parent / "matters"


@pytest.fixture(scope="module")
def targets(pool) -> ReduceDriver:
    return ReduceDriver(pool, workers=2, config=RunConfig(timeout=30), torch_version="2.13.0", ablate=False)


FIXTURES = ("frozenset_subclass_at_graph_break.py", "closure_dict_in_init.py", "format_spec_dynamic.py")


@pytest.fixture(scope="module")
def reduced(targets: ReduceDriver, tmp_path_factory) -> dict[str, ReductionReport]:
    """Each fixture reduced and explained once, for all the tests of this module."""
    out = tmp_path_factory.mktemp("reduced")
    return {name: targets.reduce_path(PROGRAMS / name, out=out / name) for name in FIXTURES}


def explained(reduced: dict[str, ReductionReport], name: str) -> tuple[dict, str, str]:
    outcome = reduced[name]
    assert not outcome.error and outcome.reduction is not None and outcome.reduction.confirmed, outcome.error
    assert outcome.matters is not None
    data = outcome.as_json()["matters"]
    assert 0 < data["checks"] <= 2 * 2 * matters.DEFAULT_BUDGET
    finding = Finding(outcome.reduction.signature, outcome.reduction.check.reason, directory="findings/x",
                      reduction=outcome.as_json())
    return data, title(finding), report_markdown(finding, repro_source=None, versions={})


def not_needed(data: dict) -> list[str]:
    return data["not_needed"] + data["any_neighbour"] + data["removed"]


def test_a_frozenset_subclass_at_a_graph_break_needs_it_its_generator_and_the_break_not_the_filter(reduced):
    data, headline, report = explained(reduced, "frozenset_subclass_at_graph_break.py")
    assert set(data["needed"]) == {"a `frozenset` subclass", "a graph break", "a generator expression"}, data
    assert "a `frozenset` subclass" in headline and "a graph break" in headline
    assert "### What matters" in report and "as a plain `frozenset`" in report
    # the filter, which the analysis proved unneeded, is out of the reduced program
    assert "the generator's filter" in data["removed"] and " if " not in \
        reduced["frozenset_subclass_at_graph_break.py"].reduction.reduced.source, data


@pytest.mark.parametrize("name", FIXTURES)
def test_the_reduced_program_keeps_nothing_its_line_on_what_matters_calls_not_needed(reduced, name):
    outcome = reduced[name]
    data, _, _ = explained(reduced, name)
    listed = data["not_needed"] + data["removed"]  # what the line says is not needed
    assert "not needed: " + ", ".join(listed) in matters_summary(data) or not listed
    left = set(constructs(outcome.reduction.reduced.source))
    assert not left & set(listed), (left, data)
    assert Path(outcome.written[0]).read_text() == outcome.reduction.reduced.source  # reduced.py is that program
    assert not data.get("drifted"), data  # and it shows the original's bug


def test_a_closure_dict_mutated_in_init_does_not_need_wraps(reduced):
    data, headline, report = explained(reduced, "closure_dict_in_init.py")
    assert "a `dict` held in a closure" in data["needed"], data
    assert "`@functools.wraps`" in not_needed(data), data
    assert "wraps" not in headline and "a `dict` held in a closure" in headline


def test_a_format_spec_under_dynamic_does_not_need_vmap(reduced):
    data, headline, report = explained(reduced, "format_spec_dynamic.py")
    assert set(data["needed"]) == {"`dynamic=True`", "the format spec `:d`"}, data
    assert "`torch.func.vmap`" in not_needed(data), data
    assert "vmap" not in headline and "`dynamic=True`" in headline and "`:d`" in headline
