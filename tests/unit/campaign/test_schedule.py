"""Power schedules: every entry chosen eventually, rare and fast ones more often."""

from __future__ import annotations

import random

import pytest

from mutator.campaign.corpus import Corpus, CoverageMap
from mutator.campaign.schedule import FastSchedule, RareSchedule, UniformSchedule

from tests.unit.campaign.helpers import entry


@pytest.mark.parametrize("schedule", [UniformSchedule(), FastSchedule(), RareSchedule()], ids=lambda s: s.name)
def test_schedules_choose_every_entry_eventually_and_prefer_rare_ones(schedule):
    corpus, cmap = Corpus(), CoverageMap()
    common, rare = entry(0, {1}), entry(1, {2})
    corpus.add(common)
    corpus.add(rare)
    cmap.hits = {1: 20, 2: 1}
    rng = random.Random(0)
    chosen = [schedule.choose(corpus, cmap, rng).id for _ in range(400)]
    assert set(chosen) == {0, 1}
    if schedule.name != "uniform":
        assert chosen.count(1) > chosen.count(0)


def test_rare_schedule_prefers_the_faster_of_two_equally_rare_entries():
    corpus, cmap = Corpus(), CoverageMap()
    slow, fast = entry(0, {1, 2}, seconds=4.0), entry(1, {3, 4}, seconds=0.5)
    corpus.add(slow)
    corpus.add(fast)
    cmap.hits = {1: 1, 2: 1, 3: 1, 4: 1}
    rng = random.Random(0)
    chosen = [RareSchedule().choose(corpus, cmap, rng).id for _ in range(400)]
    assert chosen.count(1) > 3 * chosen.count(0) > 0
