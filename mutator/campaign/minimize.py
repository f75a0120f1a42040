"""Corpus minimisation, like afl-cmin: the smallest set of programs covering every feature.

Features come from queue sidecars (`queue/*.json`) where a campaign stored them (a
campaign directory stands for its `queue/`); programs without any are run once,
compiled, through the pool (never in this process).
The cover is greedy: each feature, rarest first, is covered by the cheapest program that
has it (seconds to check, then size), which brings all of its other features along.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from mutator.core import storage
from mutator.core.program import Program, ProgramError, discover, load_program


@dataclass(frozen=True, slots=True)
class Entry:
    path: Path
    program: Program
    features: frozenset[int]
    seconds: float  # what checking it costs; 0 when not known

    @property
    def cost(self) -> tuple[float, int, str]:
        return (self.seconds, len(self.program.source), str(self.path))


def load(dirs: Iterable[str | Path]) -> tuple[list[Entry], list[Program], list[str]]:
    """Programs with their stored features, programs that have none, and one-line errors."""
    with_features: list[Entry] = []
    without: list[Program] = []
    errors: list[str] = []
    roots = [Path(d) / "queue" if (Path(d) / "campaign.json").exists() else Path(d) for d in dirs]
    for path in discover(roots):
        try:
            program = load_program(path)
        except ProgramError as exc:
            errors.append(str(exc))
            continue
        sidecar = path.with_suffix(".json")
        data = storage.read_json(sidecar) if sidecar.exists() else None
        if isinstance(data, dict) and isinstance(data.get("features"), list):
            with_features.append(Entry(path, program, frozenset(data["features"]), float(data.get("seconds", 0.0))))
        else:
            without.append(program)
    return with_features, without, errors


def cover(entries: list[Entry]) -> list[Entry]:
    """A small subset of `entries` whose features together are all of theirs."""
    holders: dict[int, list[Entry]] = defaultdict(list)
    for entry in entries:
        for feature in entry.features:
            holders[feature].append(entry)
    chosen: list[Entry] = []
    covered: set[int] = set()
    for feature in sorted(holders, key=lambda f: (len(holders[f]), f)):
        if feature in covered:
            continue
        best = min(holders[feature], key=lambda e: e.cost)
        chosen.append(best)
        covered |= best.features
    return sorted(set(chosen), key=lambda e: str(e.path))


def minimize(dirs: Iterable[str | Path], out: Path, *,
             features_of: Callable[[list[Program]], list[tuple[frozenset[int], float]]]) -> dict[str, object]:
    """Write the cover of every program under `dirs` to `out` (with sidecars); a summary.

    `features_of` runs the programs that have no stored features (through the pool).
    """
    entries, without, errors = load(dirs)
    for program, (features, seconds) in zip(without, features_of(without)):
        entries.append(Entry(Path(program.name), program, features, seconds))
    chosen = cover(entries)
    for entry in chosen:
        name = _unique(out, entry.path)
        storage.write_text(out / name, entry.program.source)
        storage.write_json((out / name).with_suffix(".json"),
                           dict(source=str(entry.path), seconds=entry.seconds, features=sorted(entry.features)))
    before = frozenset().union(*(e.features for e in entries)) if entries else frozenset()
    after = frozenset().union(*(e.features for e in chosen)) if chosen else frozenset()
    return dict(programs_before=len(entries), programs_after=len(chosen), features_before=len(before),
                features_after=len(after), ran=len(without), errors=errors, out=str(out))


def _unique(out: Path, path: Path) -> str:
    name, n = path.name, 2
    while (out / name).exists():
        name = f"{path.stem}~{n}{path.suffix}"
        n += 1
    return name
