"""One finding per bug: split off the variants of a finding that reduce to another bug.

A signature can hide distinct bugs; a finding keeps the smallest program of each
distinct trigger (`variants/`). `split_variants` reduces up to N of them (`mutate reduce
--variants N`) and compares each reduced program with the finding's own:

- the same canonical form: the same bug;
- one program's canonical lines contained in the other's (the reducer stopped at a larger
  program of the same bug): the same bug;
- otherwise another bug only on evidence: both carry a "what matters" analysis
  (`reduction["matters"]`) that found constructs needed, and no construct is needed by
  both. Different canonical forms alone are not evidence: variants of one bug reduce to
  different programs (a `self.__dict__` count under `fullgraph=True` in one, the same
  count in a module's `forward` in another; `vars(x)` and `getattr(x, "__dict__")`), and
  a first version of this rule split every variant of four real findings of a 20-minute
  campaign into findings of their own. Variants that are the same bug as each other go
  together.

Each other bug becomes a finding of its own, `<directory>-splitN`, with the signature and
the part `splitN`, `split_from` naming the finding it came from, and its variants, hits
and history moved there. The new directory is written whole under `.split-tmp/` and
renamed into place, so a kill leaves no half-written finding; the original's record is
updated after that.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mutator.core import storage
from mutator.core.configurations import DEFAULT
from mutator.findings.finding import Finding, trigger
from mutator.findings.needs import needed_constructs
from mutator.findings.store import FindingStore
from mutator.core.program import ProgramError, load_program
from mutator.findings.canonical import canonical_digest
from mutator.reduce.reducer import NotReproduced, Reducer, Reduction
from mutator.findings.root_cause import canonical_lines

TEMPORARY = ".split-tmp"  # under the campaign directory: never read as a finding


@dataclass(frozen=True, slots=True)
class Reduced:
    """A reduced program as the split compares it."""

    source: str
    canonical: str
    lines: tuple[str, ...]
    needed: frozenset[str] | None  # constructs the "what matters" analysis found needed, if it ran

    @classmethod
    def of(cls, source: str, needed: frozenset[str] | None = None) -> Reduced:
        return cls(source, canonical_digest(source), canonical_lines(source) or (), needed)

    @classmethod
    def of_record(cls, reduction: dict[str, Any]) -> Reduced | None:
        """A finding's confirmed reduction; None when it has none."""
        if not reduction.get("confirmed") or not reduction.get("source"):
            return None
        return cls.of(reduction["source"], needed_constructs(reduction))


def _contains(longer: tuple[str, ...], shorter: tuple[str, ...]) -> bool:
    """Whether `shorter`'s lines appear in `longer` in order."""
    rest = iter(longer)
    return bool(shorter) and all(line in rest for line in shorter)


def same_bug(a: Reduced, b: Reduced) -> bool:
    """Whether two reduced programs are one bug, as far as anything tells them apart (see
    the module's docstring): another bug needs constructs of its own, none of this one's."""
    if a.canonical == b.canonical or _contains(a.lines, b.lines) or _contains(b.lines, a.lines):
        return True
    return a.needed is None or b.needed is None or bool(a.needed & b.needed)


@dataclass
class VariantOutcome:
    """What became of one variant: `verdict` is "same bug", "split", "does not reproduce",
    "did not hold" or "not reduced to the end" (its time limit ran out: never split); `into`
    the directory of the finding it now belongs to."""

    key: str
    file: str
    verdict: str
    into: str = ""
    detail: str = ""
    reduced_lines: int = 0

    def as_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class _Bug:
    reduced: Reduced
    reduction: Reduction
    matters: dict[str, Any] | None
    keys: list[str] = field(default_factory=list)
    outcomes: list[VariantOutcome] = field(default_factory=list)


def choose_variants(directory: Path, finding: Finding, limit: int) -> list[str]:
    """Up to `limit` variant keys, most hits first, whose program is not smallest.py's."""
    smallest = (directory / "smallest.py").read_text(encoding="utf-8", errors="replace")
    chosen = []
    for key, variant in sorted(finding.variants.items(), key=lambda kv: (-kv[1].get("hits", 0), kv[0])):
        path = directory / variant["file"]
        if len(chosen) < limit and path.is_file() and path.read_text(encoding="utf-8", errors="replace") != smallest:
            chosen.append(key)
    return chosen


def split_variants(reducer: Reducer, store: FindingStore, finding: Finding, *, limit: int,
                   time_limit: float | None = None,
                   explain: Callable[[Reduction], dict[str, Any] | None] | None = None,
                   on_progress: Callable[[str, str], None] = lambda s, n: None,
                   reducer_for: Callable[[str], Reducer] | None = None) -> list[VariantOutcome]:
    """Reduce up to `limit` variants of a reduced finding and split off those of other bugs.
    `explain`: the "what matters" analysis of a reduced variant (as `reduction["matters"]`);
    `reducer_for`: the reducer of a variant's Dynamo configuration (default: `reducer`)."""
    own = Reduced.of_record(finding.reduction)
    if own is None or limit <= 0:
        return []
    directory = store.root / finding.directory
    bugs: list[_Bug] = []
    outcomes = []
    for key in choose_variants(directory, finding, limit):
        variant = finding.variants[key]
        outcome = VariantOutcome(key, variant["file"], "same bug", into=finding.directory)
        outcomes.append(outcome)
        chosen = reducer_for(variant.get("configuration", DEFAULT)) if reducer_for is not None else reducer
        try:
            reduction = chosen.reduce(load_program(directory / variant["file"]), expect=finding.signature.as_run(),
                                      time_limit=time_limit, on_progress=on_progress)
        except (NotReproduced, ProgramError) as exc:
            outcome.verdict, outcome.into, outcome.detail = "does not reproduce", "", str(exc)[:300]
            continue
        if not reduction.confirmed:
            outcome.verdict, outcome.into = "did not hold", ""
            continue
        if reduction.stats.timed_out:  # a program reduced halfway differs from any other: it tells nothing
            outcome.verdict, outcome.into = "not reduced to the end", ""
            outcome.detail = "the time limit ended its reduction; give more --time-limit"
            continue
        matters = explain(reduction) if explain is not None else None
        reduced = Reduced.of(reduction.reduced.source, needed_constructs(dict(matters=matters)))
        outcome.reduced_lines = reduction.lines[1]
        if same_bug(own, reduced):
            continue
        bug = next((b for b in bugs if same_bug(b.reduced, reduced)), None)
        if bug is None:
            bug = _Bug(reduced, reduction, matters)
            bugs.append(bug)
        bug.keys.append(key)
        bug.outcomes.append(outcome)
        outcome.verdict = "split"
    for bug in bugs:
        into = write_split(store, finding, bug.keys, bug.reduction, matters=bug.matters)
        for outcome in bug.outcomes:
            outcome.into = into.directory
    return outcomes


def write_split(store: FindingStore, finding: Finding, keys: list[str], reduction: Reduction, *,
                matters: dict[str, Any] | None = None) -> Finding:
    """Move the variants `keys` of `finding` into a new finding reduced to `reduction`."""
    from mutator.reduce.driver import ReductionReport  # the record of a reduction, as record_reduction writes it

    root = store.root
    number = 1
    while any(f.signature == dataclasses.replace(finding.signature.base(), part=f"split{number}")
              for f in store.findings.values()) or (root / f"{finding.directory}-split{number}").exists():
        number += 1
    part = f"split{number}"
    signature = dataclasses.replace(finding.signature.base(), part=part)
    directory = f"{finding.directory}-{part}"
    variants = {key: dict(finding.variants[key]) for key in keys}
    moved = [hit for hit in finding.history if trigger(hit.get("provenance", "")) in variants]
    first_key = min(keys, key=lambda k: variants[k]["size"])
    source = (root / finding.directory / variants[first_key]["file"]).read_text(encoding="utf-8")
    record = dict(ReductionReport(str(root / directory), reduction=reduction).as_json(),
                  source=reduction.reduced.source, canonical=canonical_digest(reduction.reduced.source))
    if matters is not None:
        record["matters"] = matters
    split = Finding(signature, variants[first_key].get("reason", finding.reason), directory,
                    hits=sum(v["hits"] for v in variants.values()), smallest_size=len(source),
                    first_seen=min((hit["at"] for hit in moved), default=finding.first_seen), history=moved,
                    variants=variants, reduction=record, split_from=finding.directory,
                    configuration=reduction.check.configuration,
                    details=f"## Smallest program\n\n```python\n{source.rstrip()}\n```\n")
    staging = root / TEMPORARY / Path(directory).name
    if staging.exists():
        shutil.rmtree(staging)  # what a killed split left
    storage.write_text(staging / "first.py", source)
    storage.write_text(staging / "smallest.py", source)
    storage.write_text(staging / "reduced.py", reduction.reduced.source)
    for variant in variants.values():
        storage.write_bytes(staging / variant["file"], (root / finding.directory / variant["file"]).read_bytes())
    storage.write_json(staging / "finding.json", split.as_json())
    storage.write_text(staging / "README.md", store.readme(split))
    (root / directory).parent.mkdir(parents=True, exist_ok=True)
    staging.rename(root / directory)  # the whole finding appears at once
    if not any(staging.parent.iterdir()):
        staging.parent.rmdir()
    store.findings[signature] = split
    for key in keys:
        finding.variants.pop(key)
    finding.hits -= split.hits
    finding.history = [hit for hit in finding.history if hit not in moved]
    finding.split_into.append(directory)
    store.save(finding)
    for variant in variants.values():  # copied above; the record no longer names them
        (root / finding.directory / variant["file"]).unlink(missing_ok=True)
    return split
