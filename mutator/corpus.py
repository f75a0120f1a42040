"""The queue of kept programs, their features, and the map of every feature seen (DESIGN.md, "Scheduling")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mutator.features import is_arc
from mutator.program import Program


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

    @property
    def cost(self) -> float:
        """AFL's preference: small and fast programs first."""
        return len(self.program.source) * max(self.seconds, 1e-3)


class CoverageMap:
    """How many kept or judged executions reached each feature."""

    def __init__(self, hits: dict[int, int] | None = None) -> None:
        self.hits: dict[int, int] = dict(hits or {})

    def new(self, features: Iterable[int]) -> frozenset[int]:
        return frozenset(f for f in features if f not in self.hits)

    def add(self, features: Iterable[int]) -> None:
        for f in features:
            self.hits[f] = self.hits.get(f, 0) + 1

    def __len__(self) -> int:
        return len(self.hits)

    def arcs(self) -> int:
        return sum(1 for f in self.hits if is_arc(f))


class Corpus:
    def __init__(self) -> None:
        self.entries: list[CorpusEntry] = []
        self._top: dict[int, CorpusEntry] = {}  # feature -> cheapest entry that has it
        self._dirty = False

    def add(self, entry: CorpusEntry) -> None:
        self.entries.append(entry)
        for f in entry.features:
            best = self._top.get(f)
            if best is None or entry.cost < best.cost:
                self._top[f] = entry
        self._dirty = True

    def __len__(self) -> int:
        return len(self.entries)

    def next_id(self) -> int:
        return max((e.id for e in self.entries), default=-1) + 1

    def favoured(self) -> list[CorpusEntry]:
        """Greedy set cover of all features, cheapest entries first (AFL's favoured subset)."""
        if self._dirty:
            for entry in self.entries:
                entry.favoured = False
            covered: set[int] = set()
            for f, entry in sorted(self._top.items(), key=lambda item: item[1].cost):
                if f not in covered:
                    entry.favoured = True
                    covered |= entry.features
            self._dirty = False
        return [e for e in self.entries if e.favoured]
