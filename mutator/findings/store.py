"""The findings on disk: one directory per bug signature, however many programs hit it.

`findings/<slug>/` (`hangs/<slug>/` for hangs) holds `first.py` (the first program that hit
it), `smallest.py` (the smallest so far), `variants/` (the smallest program of each distinct
trigger), `finding.json` (signature, reason, every hit's provenance) and a `README.md` a
human reads first.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mutator.core import storage
from mutator.core.verdict import Verdict
from mutator.findings.finding import MAX_STORED_HITS, MAX_VARIANTS, Finding, trigger
from mutator.findings.readme import details, readme
from mutator.judge.missed import missed_by_tests
from mutator.findings.signature import Signature
from mutator.judge.check import CheckResult

_UNSAFE = re.compile(r"[^A-Za-z0-9_.]+")  # what a variant's file name may not carry

if TYPE_CHECKING:
    from mutator.mutation.mutator import Recipe


class FindingStore:
    """Save, fetch and count findings; the fuzzer decides what to record.

    What a hit adds to a finding is written at once when it is something to keep: a new
    finding, a smaller program, a new trigger's program (with its record and README). A
    hit that only counts (the same bug again, the thousandth time) is written at once too,
    unless the store is `lazy`: then its count and provenance reach finding.json and the
    README at the next `flush` (the fuzz loop's, every few seconds), so that a driver
    filing hundreds of hits a second does not rewrite two files per hit."""

    def __init__(self, root: Path, *, torch_version: str = "", backend: str = "eager", lazy: bool = False) -> None:
        self.root = root
        self.torch_version = torch_version
        self.backend = backend
        self.lazy = lazy
        self._unwritten: dict[Signature, Finding] = {}
        self.findings: dict[Signature, Finding] = {}
        self.aliases: dict[Signature, Signature] = {}  # a merged finding's signature -> the one it joined
        self.known: dict[Signature, str] = {}  # signatures synced peers have filed -> the first peer's name
        self.unreadable: list[str] = []  # finding.json files left as they are, and why
        self._spoilt: set[str] = set()  # their directories, relative to root: never written again
        for path in sorted([*root.glob("findings/*/finding.json"), *root.glob("hangs/*/finding.json")]):
            try:
                finding = Finding.from_json(storage.read_json(path))
            except (storage.StorageError, KeyError, TypeError, ValueError) as exc:
                # never moved nor rewritten: a finding's directory is the user's to look at
                self.unreadable.append(f"{path}: unreadable ({storage.one_line(exc)}); left as it is and not "
                                       "counted (a new hit of its signature is filed beside it); restore it or "
                                       "move it aside")
                self._spoilt.add(str(path.parent.relative_to(root)))
                continue
            self.findings[finding.signature] = finding
        for finding in list(self.findings.values()):
            for merged in finding.merged:
                alias = Signature(**merged["signature"])
                self.aliases[alias] = finding.signature
                self.findings.pop(alias, None)
                self._finish_move(merged)

    def at(self, directory: Path) -> Finding | None:
        """The finding stored in `directory`, if it is one of this store's."""
        return next((f for f in self.findings.values() if (self.root / f.directory).resolve() == directory.resolve()),
                    None)

    def merge(self, finding: Finding, *, into: Finding) -> None:
        """File `finding` under `into`: its hits count there, later hits of its signature go
        there, and its directory moves to `into`'s `merged/`. The record that says so is
        written before the move, and a move a kill interrupted is finished on the next load."""
        moved = f"{into.directory}/merged/{Path(finding.directory).name}"
        into.merged.append(dict(signature=finding.signature.as_json(), hits=finding.hits, reason=finding.reason,
                                directory=moved, moved_from=finding.directory))
        into.hits += finding.hits
        self.save(into)
        self.findings.pop(finding.signature, None)
        self.aliases[finding.signature] = into.signature
        self._finish_move(into.merged[-1])

    def _finish_move(self, merged: dict[str, Any]) -> None:
        source, target = self.root / merged["moved_from"], self.root / merged["directory"]
        if source.is_dir() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            source.rename(target)  # atomic: the whole directory is in one place or the other

    def record(self, result: CheckResult, *, provenance: str, parent: int | None, elapsed: float,
               recipe: Recipe | None = None, signature: Signature | None = None) -> tuple[Finding, bool]:
        """File one hit; returns the finding and whether it is new. `recipe`: how the hit was
        built from its parent, kept with the program of its trigger; `signature`: where the
        filer knows more than the run (a hit told apart from known bugs), the one to file it
        under. A signature a synced peer filed first is filed here too (nothing found is
        dropped) but is not new: it says whose it is."""
        signature = signature or Signature.of(result)
        signature = self.aliases.get(signature, signature)
        program = result.program
        size = len(program.source)
        finding = self.findings.get(signature)
        created = finding is None
        if finding is None:
            group = "hangs" if signature.verdict is Verdict.HANG else "findings"
            where = f"{group}/{signature.slug()}"
            while where in self._spoilt:  # its unreadable finding.json is there: file beside it
                where += "-again"
            finding = Finding(signature, result.reason, where, smallest_size=size,
                              first_seen=round(elapsed, 2), known_from=self.known.get(signature, ""))
            storage.write_text(self.root / finding.directory / "first.py", program.source)
        is_new = created and not finding.known_from
        directory = self.root / finding.directory
        finding.hits += 1
        finding.configurations[result.configuration] = finding.configurations.get(result.configuration, 0) + 1
        smallest = created or size < finding.smallest_size
        if smallest:
            finding.smallest_size = size
            finding.configuration = result.configuration
            finding.reason = result.reason
            storage.write_text(directory / "smallest.py", program.source)
            finding.details = details(result)
            missed = missed_by_tests(result)
            finding.missed_by_tests = missed.as_json() if missed is not None else {}
        kept = self._record_variant(finding, result, trigger(provenance), recipe)
        if len(finding.history) < MAX_STORED_HITS:
            finding.history.append(dict(at=round(elapsed, 2), provenance=provenance, parent=parent, size=size,
                                        digest=program.digest, wall=round(time.time(), 1),
                                        configuration=result.configuration))
        self.findings[signature] = finding
        if smallest or kept or not self.lazy:
            self.save(finding)
        else:
            self._unwritten[signature] = finding
        return finding, is_new

    def flush(self) -> None:
        """Write what hits that only counted have added since (a lazy store's)."""
        while self._unwritten:
            _, finding = self._unwritten.popitem()
            if self.findings.get(finding.signature) is finding:
                self.save(finding)

    def _record_variant(self, finding: Finding, result: CheckResult, key: str, recipe: Recipe | None) -> bool:
        """Count the hit under its trigger; keep its program (and recipe) if the trigger is new
        or it is smaller. Whether it kept it."""
        variant = finding.variants.get(key)
        if variant is None and len(finding.variants) >= MAX_VARIANTS:
            return False
        size = len(result.program.source)
        if variant is None:
            name = f"{len(finding.variants):02d}-{_UNSAFE.sub('-', key)[:40]}.py"
            variant = finding.variants[key] = dict(file=f"variants/{name}", hits=0, size=size)
        variant["hits"] += 1
        if variant["hits"] > 1 and size >= variant["size"]:
            return False
        variant.update(size=size, reason=result.reason[:300], configuration=result.configuration)
        if recipe is not None:
            variant["recipe"] = recipe.as_json()
        else:
            variant.pop("recipe", None)
        storage.write_text(self.root / finding.directory / variant["file"], result.program.source)
        return True

    def readme(self, finding: Finding) -> str:
        """The README.md of one of its findings (`mutator.findings.readme`)."""
        return readme(finding, root=self.root, backend=self.backend, torch_version=self.torch_version)

    def count_by_kind(self) -> dict[str, int]:
        """Findings of this instance by verdict kind (not those a synced peer had first)."""
        counts: dict[str, int] = {}
        for signature, finding in self.findings.items():
            if finding.is_new:
                counts[signature.kind] = counts.get(signature.kind, 0) + 1
        return counts

    def save(self, finding: Finding) -> None:
        """Write a finding's record and README again (after a reduction, say)."""
        directory = self.root / finding.directory
        storage.write_json(directory / "finding.json", finding.as_json())
        storage.write_text(directory / "README.md", self.readme(finding))
        self.findings[finding.signature] = finding
        self._unwritten.pop(finding.signature, None)
