"""Power schedules: which corpus entry to mutate next (strategy objects, `--schedule`).

All of them give favoured entries (the greedy cover) ten times the weight of the rest, and
but for uniform choice, less to an entry whose mutants keep hitting bugs known already
(`avoidance`): its neighbourhood is used up.

A driver feeding many workers chooses a thousand times a second, so a choice is a binary
search over cumulative weights computed now and then: the weights every REFRESH choices
(and when entries arrive: theirs at once), and the rarities and the favoured cover, which
cost a walk over every entry's features, as often as that keeps within RARITY_SHARE of the
time (every REFRESH choices where choices are few, as on one machine; less often where a
driver chooses a thousand times a second); an entry's own rarity is computed when it
arrives, and it is favoured from the next cover.
"""

from __future__ import annotations

import random
import time
from itertools import accumulate
from typing import Protocol

from mutator.campaign.corpus import Corpus, CorpusEntry, CoverageMap

UNFAVOURED = 0.1
MAX_ENERGY = 1e6
FAST_DOUBLINGS = 4
MIN_SECONDS = 0.2  # the rare schedule's floor on an entry's check time
REFRESH = 32  # choices between recomputations of the weights (and, at the least, of the rarities)
RARITY_SHARE = 0.02  # of the driver's time that recomputing rarities and the cover may take
MIN_AVOIDANCE = 0.05  # the least share of its energy an entry whose mutants hit only known bugs keeps


def avoidance(entry: CorpusEntry) -> float:
    """The share of its energy an entry keeps for the bugs known already its mutants hit:
    (1 - k)^2 of the Laplace-smoothed share k of its choices that did, at least MIN_AVOIDANCE
    (an entry chosen ten times whose mutants all hit known bugs keeps 5%; one in ten, 83%)."""
    share = entry.known_hits / (entry.times_chosen + 2)
    return max(MIN_AVOIDANCE, (1.0 - min(share, 1.0)) ** 2)


class Schedule(Protocol):
    name: str

    def choose(self, corpus: Corpus, coverage: CoverageMap, rng: random.Random) -> CorpusEntry: ...


class UniformSchedule:
    """Every entry equally likely: the baseline."""

    name = "uniform"

    def __init__(self, *, avoid_known: bool = True) -> None:
        self.avoid_known = False  # the baseline avoids nothing

    def choose(self, corpus: Corpus, coverage: CoverageMap, rng: random.Random) -> CorpusEntry:
        return rng.choice(corpus.entries)


class _Weighted:
    name = ""

    def __init__(self, *, avoid_known: bool = True) -> None:
        self.avoid_known = avoid_known
        self._calls = 0
        self._rarity: dict[int, float] = {}
        self._refreshed = 0.0  # when rarities were last recomputed (monotonic seconds)
        self._refresh_cost = 0.0  # and the CPU seconds that took
        self._weighed = 0  # entries the cumulative weights cover
        self._cumulative: list[float] = []
        self._entries: list[CorpusEntry] = []

    def choose(self, corpus: Corpus, coverage: CoverageMap, rng: random.Random) -> CorpusEntry:
        due = self._calls % REFRESH == 0
        if due and time.monotonic() - self._refreshed >= self._refresh_cost / RARITY_SHARE or not self._rarity:
            # rarities and the favoured cover: each costs a walk over every entry's features
            started = time.process_time()
            self._rarity = {e.id: self.rarity(e, coverage) for e in corpus.entries}
            corpus.favoured()
            self._refresh_cost, self._refreshed = time.process_time() - started, time.monotonic()
        if due or len(corpus) != self._weighed:
            for entry in corpus.entries[self._weighed:]:
                if entry.id not in self._rarity:
                    self._rarity[entry.id] = self.rarity(entry, coverage)
            self._entries = list(corpus.entries)
            self._cumulative = list(accumulate(
                min(MAX_ENERGY, self.energy(e, self._rarity[e.id])) * (1.0 if e.favoured else UNFAVOURED)
                * (avoidance(e) if self.avoid_known else 1.0) for e in self._entries))
            self._weighed = len(corpus)
        self._calls += 1
        return rng.choices(self._entries, cum_weights=self._cumulative)[0]

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
