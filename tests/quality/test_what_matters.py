""""What matters" names the construct a bug needs and says the padding does not matter.

Three bugs of torch 2.13's Dynamo, each in a program of ours padded with a construct that
has nothing to do with it (a filtered generator, `functools.wraps`, `vmap`): after the
reduction and the probes, the report's section and title must name what the bug needs
and list the padding as not needed (whether the reduction took it out or a probe showed
it does not matter)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutator.findings.finding import Finding
from mutator.core.observation import RunConfig
from mutator.reduce import matters
from mutator.reduce.driver import Targets
from mutator.report.issue import report_markdown, title

pytestmark = pytest.mark.quality

PROGRAMS = Path(__file__).parent / "matters"


@pytest.fixture(scope="module")
def targets(pool) -> Targets:
    return Targets(pool, workers=2, config=RunConfig(timeout=30), torch_version="2.13.0", ablate=False)


def explained(targets: Targets, name: str, tmp_path: Path) -> tuple[dict, str, str]:
    outcome = targets.reduce_path(PROGRAMS / name, out=tmp_path / name)
    assert not outcome.error and outcome.reduction is not None and outcome.reduction.confirmed, outcome.error
    assert outcome.matters is not None
    data = outcome.as_json()["matters"]
    assert 0 < data["checks"] <= 2 * 2 * matters.DEFAULT_BUDGET
    finding = Finding(outcome.reduction.signature, outcome.reduction.check.reason, directory="findings/x",
                      reduction=outcome.as_json())
    return data, title(finding), report_markdown(finding, repro_source=None, versions={})


def not_needed(data: dict) -> list[str]:
    return data["not_needed"] + data["any_neighbour"] + data["removed"]


def test_a_set_subclass_at_a_graph_break_needs_both_and_not_the_generator(targets, tmp_path):
    data, headline, report = explained(targets, "set_subclass_at_graph_break.py", tmp_path)
    assert set(data["needed"]) == {"a `set` subclass", "a graph break"}, data
    assert "a generator expression" in not_needed(data), data
    assert "a `set` subclass" in headline and "a graph break" in headline
    assert "### What matters" in report and "passes as a plain `set`" in report


def test_a_closure_dict_mutated_in_init_does_not_need_wraps(targets, tmp_path):
    data, headline, report = explained(targets, "closure_dict_in_init.py", tmp_path)
    assert "a `dict` held in a closure" in data["needed"], data
    assert "`@functools.wraps`" in not_needed(data), data
    assert "wraps" not in headline and "a `dict` held in a closure" in headline


def test_a_format_spec_under_dynamic_does_not_need_vmap(targets, tmp_path):
    data, headline, report = explained(targets, "format_spec_dynamic.py", tmp_path)
    assert set(data["needed"]) == {"`dynamic=True`", "the format spec `:d`"}, data
    assert "`torch.func.vmap`" in not_needed(data), data
    assert "vmap" not in headline and "`dynamic=True`" in headline and "`:d`" in headline
