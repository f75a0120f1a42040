"""What a session saves besides queue entries and findings, and what a resumed one takes back."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from mutator.campaign.corpus import Corpus, CoverageMap
from mutator.campaign.directory import Campaign, CampaignConfig
from mutator.campaign.schedule import UniformSchedule
from mutator.findings.store import FindingStore

from tests.unit.findings.helpers import PROGRAM


def test_operator_usefulness_and_family_yield_survive_a_resume(tmp_path: Path):
    from mutator.campaign.filing import Filing
    from mutator.campaign.fuzzer import Fuzzer
    from mutator.mutation.mutator import Mutator
    from mutator.mutation.operator import Mutant, Step
    from mutator.mutation.registry import all_operators

    def fuzzer(campaign: Campaign) -> Fuzzer:
        return Fuzzer(corpus=Corpus(), coverage=CoverageMap(), mutator=Mutator(all_operators()),
                      schedule=UniformSchedule(), checker=None, filing=Filing(FindingStore(campaign.root)),  # type: ignore[arg-type]
                      campaign=campaign, rng=random.Random(0))

    campaign = Campaign.create(tmp_path / "c", CampaignConfig(corpus=("seeds",)))
    first = fuzzer(campaign)
    op = next(op for op in all_operators() if op.family == "E2")
    first.mutator.stats[op.id].applied += 1
    first.mutator.record(Mutant(PROGRAM, (Step(op.id, "fn:1"),)), valid=True, new_features=False, finding=False)
    first.save(force=True)
    campaign.close()
    resumed = Campaign.resume(tmp_path / "c")
    second = fuzzer(resumed)
    second.restore(resumed.load_stats())
    resumed.close()
    assert second.mutator.family_yield["E2"] == pytest.approx(0.9) and second.mutator.family_yield["B1"] == 1.0
    assert second.mutator.stats[op.id] == first.mutator.stats[op.id]


def test_a_campaign_from_before_arc_sampling_counts_every_check_as_traced(tmp_path: Path):
    from mutator.campaign.checkpoint import Checkpoint

    campaign = Campaign.create(tmp_path / "c", CampaignConfig(corpus=("seeds",)))
    checkpoint, store = Checkpoint(campaign), FindingStore(campaign.root)
    old = checkpoint.restore({"counters": {"execs": 40}}, corpus=Corpus(), store=store, mutator=_mutator())
    sampled = checkpoint.restore({"counters": {"execs": 40, "traced": 9}}, corpus=Corpus(), store=store,
                                 mutator=_mutator())
    campaign.close()
    assert (old.traced, sampled.traced) == (40, 9)


def _mutator():
    from mutator.mutation.mutator import Mutator
    from mutator.mutation.registry import all_operators

    return Mutator(all_operators())
