"""The coverage map and the corpus's favoured entries, without torch."""

from __future__ import annotations

from mutator.campaign.corpus import Corpus, CoverageMap

from tests.unit.campaign.helpers import entry


def test_coverage_map_reports_only_new_features():
    cmap = CoverageMap()
    assert cmap.new({1, 2}) == {1, 2}
    cmap.add({1, 2})
    cmap.add({2})
    assert cmap.new({1, 2, 3}) == {3} and cmap.hits == {1: 1, 2: 2} and cmap.arcs() == 2


def test_favoured_is_a_cheap_greedy_cover():
    corpus = Corpus()
    big = entry(0, {1, 2, 3}, source="# " + "x" * 500)
    small_a = entry(1, {1, 2})
    small_b = entry(2, {3})
    redundant = entry(3, {2}, source="# " + "y" * 900)
    for e in (big, small_a, small_b, redundant):
        corpus.add(e)
    assert {e.id for e in corpus.favoured()} == {1, 2}
    assert corpus.next_id() == 4
