"""Power schedules: which corpus entry to mutate next (strategy objects, `--schedule`).

All of them give favoured entries (the greedy cover) ten times the weight of the rest.
"""

from __future__ import annotations

import random
from typing import Protocol

from mutator.corpus import Corpus, CorpusEntry, CoverageMap

UNFAVOURED = 0.1
MAX_ENERGY = 1e6
FAST_DOUBLINGS = 4
MIN_SECONDS = 0.2  # the rare schedule's floor on an entry's check time
REFRESH = 32  # choices between recomputations of the (costly) per-entry rarity


class Schedule(Protocol):
    name: str

    def choose(self, corpus: Corpus, coverage: CoverageMap, rng: random.Random) -> CorpusEntry: ...


class UniformSchedule:
    """Every entry equally likely: the baseline."""

    name = "uniform"

    def choose(self, corpus: Corpus, coverage: CoverageMap, rng: random.Random) -> CorpusEntry:
        return rng.choice(corpus.entries)


class _Weighted:
    name = ""

    def __init__(self) -> None:
        self._calls = 0
        self._cache: dict[int, float] = {}

    def choose(self, corpus: Corpus, coverage: CoverageMap, rng: random.Random) -> CorpusEntry:
        if self._calls % REFRESH == 0 or len(self._cache) != len(corpus):
            self._cache = {e.id: self.rarity(e, coverage) for e in corpus.entries}
        self._calls += 1
        corpus.favoured()
        weights = [min(MAX_ENERGY, self.energy(e, self._cache[e.id])) * (1.0 if e.favoured else UNFAVOURED)
                   for e in corpus.entries]
        return rng.choices(corpus.entries, weights=weights)[0]

    def rarity(self, entry: CorpusEntry, coverage: CoverageMap) -> float:
        raise NotImplementedError

    def energy(self, entry: CorpusEntry, rarity: float) -> float:
        raise NotImplementedError


class FastSchedule(_Weighted):
    """AFLFast's "fast": energy 2^s(i) / f(i), s(i) the times the entry was chosen (capped at
    FAST_DOUBLINGS, since here energy is a choice probability, not a mutation count) and
    f(i) its path frequency: the hit count of its rarest feature, how many executions
    reached what only this entry's kind of program reaches.
    """

    name = "fast"

    def rarity(self, entry: CorpusEntry, coverage: CoverageMap) -> float:
        return float(min((coverage.hits.get(f, 1) for f in entry.features), default=1))

    def energy(self, entry: CorpusEntry, rarity: float) -> float:
        return 2.0 ** min(entry.times_chosen, FAST_DOUBLINGS) / rarity


class RareSchedule(_Weighted):
    """Entries holding rare features first, per second of checking them.

    Weight: the sum of 1/hits over the entry's features, divided by the seconds its check
    took (at least MIN_SECONDS). Without the division the sum favours large programs,
    which hold more features and are slower: the loop then ran at half the executions per
    second of uniform choice (bench/guidance.py).
    """

    name = "rare"

    def rarity(self, entry: CorpusEntry, coverage: CoverageMap) -> float:
        return sum(1.0 / coverage.hits.get(f, 1) for f in entry.features)

    def energy(self, entry: CorpusEntry, rarity: float) -> float:
        return max(rarity, 1e-6) / (1 + 0.1 * entry.times_chosen) / max(entry.seconds, MIN_SECONDS)


SCHEDULES: dict[str, type[Schedule]] = {"uniform": UniformSchedule, "fast": FastSchedule, "rare": RareSchedule}
