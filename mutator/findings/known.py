"""Bugs filed before (`--known DIR`): what a campaign or a report must not count as new.

A known bug is a signature, or the canonical form of a reduced program
(`mutator.findings.canonical`), taken from earlier campaigns (their `findings/`), a folder
of findings, a single finding directory, or a folder of filed reproducers (`.py` files:
a `repro.py` counts by the program above its reproducer footer). A finding matches when
its signature is one of them, or when its confirmed reduction has the same canonical form.

The fuzzer does not file a hit whose signature is known: it counts it per signature in
the campaign's `known.json` (`KnownHits`), so that "nothing new" is visible without a
folder per known bug.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mutator.core import storage
from mutator.findings.store import Finding, Signature
from mutator.findings.canonical import canonical_digest

REPRO_SEPARATOR = "# ---- reproducer:"  # the first line of repro.py's footer (mutator.reduce.repro._SEPARATOR)
KNOWN_FILE = "known.json"


class KnownError(ValueError):
    """A --known path that holds nothing to know; the message says what to give."""


@dataclass(frozen=True, slots=True)
class Match:
    """Why a finding is known: where it was filed before, and by what it matched."""

    where: str  # a finding directory or a reproducer file
    by: str  # "signature" or "canonical form"

    def as_json(self) -> dict[str, str]:
        return dict(where=self.where, by=self.by)


@dataclass
class KnownBugs:
    """Signatures and canonical digests of bugs filed before, each with where it was filed."""

    signatures: dict[Signature, str] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)  # the paths given, as given
    problems: list[str] = field(default_factory=list)  # files skipped, and why

    @classmethod
    def load(cls, paths: list[Path] | tuple[Path, ...]) -> KnownBugs:
        """Everything filed in `paths`; raises KnownError for a path with nothing in it."""
        known = cls()
        for path in paths:
            before = (len(known.signatures), len(known.digests))
            known.sources.append(str(path))
            known._add_path(path)
            if (len(known.signatures), len(known.digests)) == before and not known._had_records(path):
                raise KnownError(f"{path}: no findings (findings/*/finding.json) and no reproducer .py files; "
                                 "give a campaign directory, a findings folder, a finding directory or a folder "
                                 "of reproducers")
        return known

    def __bool__(self) -> bool:
        return bool(self.signatures or self.digests)

    def by_signature(self, signature: Signature) -> Match | None:
        where = self.signatures.get(signature) or self.signatures.get(signature.base())
        return Match(where, "signature") if where else None

    def by_canonical(self, digest: str) -> Match | None:
        where = self.digests.get(digest) if digest else None
        return Match(where, "canonical form") if where else None

    def match(self, finding: Finding, *, directory: Path | None = None) -> Match | None:
        """Whether `finding` (stored in `directory`) was filed before; never by itself."""
        own = str(directory.resolve()) if directory is not None else ""
        canonical = finding.reduction.get("canonical", "") if finding.reduction.get("confirmed") else ""
        for match in (self.by_signature(finding.signature), self.by_canonical(canonical)):
            if match is not None and match.where != own:
                return match
        return None

    # -- reading what was filed -------------------------------------------------------------
    def _add_path(self, path: Path) -> None:
        if path.is_file():
            self._add_reproducer(path)
        elif (path / "finding.json").is_file():
            self._add_finding(path / "finding.json")
        elif (path / "findings").is_dir() or (path / "hangs").is_dir():  # a campaign: its findings only
            for record in sorted([*path.glob("findings/*/finding.json"), *path.glob("hangs/*/finding.json")]):
                self._add_finding(record)
        elif any(path.glob("*/finding.json")):
            for record in sorted(path.glob("*/finding.json")):
                self._add_finding(record)
        else:
            for reproducer in sorted(path.rglob("*.py")):
                self._add_reproducer(reproducer)

    @staticmethod
    def _had_records(path: Path) -> bool:
        """A campaign with no findings yet is something to know (nothing), not a mistake."""
        return (path / "findings").is_dir() or (path / "hangs").is_dir()

    def _add_finding(self, record: Path) -> None:
        try:
            data = storage.read_json(record)
            finding = Finding.from_json(data)
        except (storage.StorageError, KeyError, TypeError, ValueError) as exc:
            self.problems.append(f"{record}: unreadable ({storage.one_line(exc)}); not known")
            return
        where = str(record.parent.resolve())
        for signature in (finding.signature, *(Signature(**m["signature"]) for m in finding.merged
                                               if isinstance(m.get("signature"), dict))):
            self.signatures.setdefault(signature, where)
        if finding.reduction.get("confirmed") and finding.reduction.get("canonical"):
            self.digests.setdefault(finding.reduction["canonical"], where)

    def _add_reproducer(self, path: Path) -> None:
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.problems.append(f"{path}: unreadable ({storage.one_line(exc)}); not known")
            return
        for digest in reproducer_digests(source):
            self.digests.setdefault(digest, str(path.resolve()))


def reproducer_digests(source: str) -> set[str]:
    """Canonical digests of a filed reproducer: its program above the reproducer footer
    (repro.py adds `import torch` first when the program lacked it: with and without)."""
    lines = source.splitlines(keepends=True)
    cut = next((i for i, line in enumerate(lines) if line.startswith(REPRO_SEPARATOR)), len(lines))
    program = "".join(lines[:cut])
    digests = {canonical_digest(program)}
    if cut < len(lines) and program.startswith("import torch\n"):
        digests.add(canonical_digest(program.removeprefix("import torch\n")))
    return digests


class KnownHits:
    """The campaign's `known.json`: hits of known signatures, counted instead of filed."""

    def __init__(self, root: Path, known: KnownBugs) -> None:
        self.path = root / KNOWN_FILE
        self.known = known
        self.hits: dict[Signature, dict[str, Any]] = {}
        self._dirty = False
        if self.path.exists():
            try:
                for row in storage.read_json(self.path).get("signatures", []):
                    self.hits[Signature(**row["signature"])] = row
            except (storage.StorageError, AttributeError, KeyError, TypeError) as exc:
                # counts only: begin again rather than stop the campaign
                known.problems.append(f"{self.path}: unreadable ({storage.one_line(exc)}); counting anew")
                self.hits = {}

    @staticmethod
    def sources_of(root: Path) -> list[Path]:
        """The --known paths an earlier session of the campaign in `root` used."""
        try:
            return [Path(p) for p in storage.read_json(root / KNOWN_FILE).get("sources", [])]
        except (storage.StorageError, AttributeError):
            return []

    def count(self, signature: Signature, *, provenance: str, size: int, elapsed: float) -> bool:
        """Count a hit if its signature is known; whether it was."""
        match = self.known.by_signature(signature)
        if match is None:
            return False
        row = self.hits.get(signature)
        if row is None:
            row = self.hits[signature] = dict(signature=signature.as_json(), where=match.where, hits=0,
                                              first_at=round(elapsed, 2), provenance=provenance, size=size)
        row["hits"] += 1
        row["last_at"] = round(elapsed, 2)
        if size < row.get("size", size + 1):
            row.update(size=size, provenance=provenance)
        self._dirty = True
        return True

    @property
    def total(self) -> int:
        return sum(row["hits"] for row in self.hits.values())

    def save(self, *, wall: float | None = None) -> None:
        if not self._dirty and self.path.exists():
            return
        storage.write_json(self.path, dict(
            sources=self.known.sources, saved=round(wall if wall is not None else time.time(), 1),
            signatures=sorted(self.hits.values(), key=lambda row: (-row["hits"], row["where"]))))
        self._dirty = False


def mark(finding: Finding, known: KnownBugs, *, directory: Path | None = None) -> bool:
    """Mark `finding` known when it matches; whether it does now."""
    match = known.match(finding, directory=directory)
    if match is not None:
        finding.known = match.as_json()
    return bool(finding.known)
