"""The queue of kept programs, their features, and the map of every feature seen (docs/design.md, "Scheduling")."""

from __future__ import annotations

import secrets
from collections import _count_elements  # Counter.update's C loop, for a plain dict
from collections.abc import Iterable
from dataclasses import dataclass

from mutator.core.configurations import DEFAULT
from mutator.core.features import is_arc
from mutator.core.program import Program


@dataclass
class CorpusEntry:
    id: int
    program: Program
    features: frozenset[int]
    seconds: float  # time to check it (all runs)
    depth: int  # 0 for seeds, parent's depth + 1 for mutants
    parent: int | None
    provenance: str  # the operators that made it, or the seed's path
    times_chosen: int = 0
    finds: int = 0  # mutants of it that were kept or found a bug
    favoured: bool = False
    configuration: str = DEFAULT  # the Dynamo configuration it was checked (and kept) under
    # mutants of it that hit a bug filed before (--known) or one this campaign has filed many times:
    # the neighbourhood is used up, and the schedule gives it less energy
    known_hits: int = 0

    @property
    def cost(self) -> float:
        """AFL's preference: small and fast programs first."""
        return len(self.program.source) * max(self.seconds, 1e-3)


class CoverageMap:
    """How many judged executions reached each feature.

    Costs are per feature a check brings, in C where it can be (a driver feeding many
    workers merges thousands of checks a second): `new` is a set difference against the
    map (a plain dict: set difference walks only the features then), `add` counts with
    Counter's C loop, and the number of arcs is kept as features arrive, not recounted.
    """

    def __init__(self, hits: dict[int, int] | None = None) -> None:
        self.hits = hits or {}
        # names this map to the workers that report coverage to it (`CheckTask.coverage_key`)
        self.key = secrets.token_hex(8)

    @property
    def hits(self) -> dict[int, int]:
        return self._hits

    @hits.setter
    def hits(self, hits: dict[int, int]) -> None:
        self._hits = dict(hits)
        self._arcs = sum(1 for f in self._hits if is_arc(f))

    def new(self, features: Iterable[int]) -> frozenset[int]:
        return (features if isinstance(features, frozenset) else frozenset(features)).difference(self._hits)

    def add(self, features: Iterable[int]) -> None:
        """One more execution reached each of `features`."""
        features = features if isinstance(features, frozenset) else frozenset(features)
        self._arcs += sum(1 for f in features.difference(self._hits) if is_arc(f))
        _count_elements(self._hits, features)

    def add_counts(self, counts: dict[int, int]) -> None:
        """Executions counted elsewhere (a worker's batch): `counts[f]` more reached f."""
        self._arcs += sum(1 for f in frozenset(counts).difference(self._hits) if is_arc(f))
        hits = self._hits
        for f, n in counts.items():
            hits[f] = hits.get(f, 0) + n

    def include(self, features: Iterable[int]) -> None:
        """Features known to be reached (a queue entry's, on resume) that the map lacks: counted once."""
        self.add(self.new(features))

    def __len__(self) -> int:
        return len(self._hits)

    def arcs(self) -> int:
        return self._arcs


class Corpus:
    def __init__(self) -> None:
        self.entries: list[CorpusEntry] = []
        self._top: dict[int, CorpusEntry] = {}  # feature -> cheapest entry that has it
        self._tops_of: dict[int, set[int]] = {}  # entry id -> the features it is cheapest for
        self._costs: dict[int, float] = {}  # entry id -> its cost when it came
        self._favoured: list[CorpusEntry] = []
        self._dirty = False
        self._next_id = 0

    def add(self, entry: CorpusEntry) -> None:
        self.entries.append(entry)
        self._next_id = max(self._next_id, entry.id + 1)
        mine = self._tops_of.setdefault(entry.id, set())
        cost = self._costs[entry.id] = entry.cost
        top, costs = self._top, self._costs
        for f in entry.features:
            best = top.get(f)
            if best is None or cost < costs[best.id]:
                if best is not None:
                    self._tops_of[best.id].discard(f)
                top[f] = entry
                mine.add(f)
        self._dirty = True

    def __len__(self) -> int:
        return len(self.entries)

    def next_id(self) -> int:
        return self._next_id

    def favoured(self) -> list[CorpusEntry]:
        """Greedy set cover of all features, cheapest entries first (AFL's favoured subset):
        an entry is favoured when a feature it is the cheapest for is not covered yet by the
        cheaper favoured ones. Recomputed when entries came since; `favoured_count` is the
        last computed size, for whoever must not pay for a recomputation."""
        if self._dirty:
            covered: set[int] = set()
            self._favoured = []
            for entry in sorted(self.entries, key=lambda e: self._costs[e.id]):
                mine = self._tops_of.get(entry.id)
                entry.favoured = bool(mine) and not mine.issubset(covered)
                if entry.favoured:
                    self._favoured.append(entry)
                    covered.update(entry.features)
            self._favoured.sort(key=lambda e: e.id)
            self._dirty = False
        return list(self._favoured)

    @property
    def favoured_count(self) -> int:
        return len(self._favoured)
