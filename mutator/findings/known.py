"""Bugs filed before (`--known DIR`): what a campaign or a report must not count as new.

A known bug is a signature, the canonical form of a reduced program
(`mutator.findings.canonical`), or what a reduced program needs and how it fails
(`mutator.findings.needs.failure_key`), taken from earlier campaigns (their `findings/`), a
folder of findings, a single finding directory, or a folder of filed reproducers (`.py`
files: a `repro.py` counts by the program above its reproducer footer). A finding matches
when its signature is one of them, or when its confirmed reduction has the same canonical
form, or needs the same constructs and fails the same way.

Signatures move between torch releases (a crash site, a message), so the programs of the
known bugs (`programs`: reduced.py and smallest.py, under the configuration each failed
under; a reproducer's program) are judged again on the torch under test when a campaign
starts (`rejudge`, cached by content, configuration and build), and the signatures they show
there are known too.

The fuzzer does not file a hit whose signature is known: it counts it per signature in
the campaign's `known.json` (`KnownHits`), so that "nothing new" is visible without a
folder per known bug.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mutator.core import storage
from mutator.core.configurations import CONFIGURATIONS, DEFAULT, set_in
from mutator.core.program import Program, ProgramError
from mutator.findings.canonical import canonical_digest
from mutator.findings.needs import Present, failure_key, needed_constructs
from mutator.findings.store import Finding, Signature

if TYPE_CHECKING:
    from mutator.core.build import Build
    from mutator.judge.check import Checker, CheckReply

REPRO_SEPARATOR = "# ---- reproducer:"  # the first line of repro.py's footer (mutator.reduce.repro._SEPARATOR)
KNOWN_FILE = "known.json"


class KnownError(ValueError):
    """A --known path that holds nothing to know; the message says what to give."""


@dataclass(frozen=True, slots=True)
class Match:
    """Why a finding is known: where it was filed before, and by what it matched."""

    where: str  # a finding directory or a reproducer file
    by: str  # "signature", "signature on this torch", "canonical form" or "what it needs and how it fails"

    def as_json(self) -> dict[str, str]:
        return dict(where=self.where, by=self.by)


@dataclass(frozen=True, slots=True)
class Apart:
    """A hit of a known signature that names no place, told apart from the known bugs of it:
    its program lacks a construct each of them needs (`KnownBugs.told_apart`)."""

    unlike: str  # `Signature.unlike`: a digest of the known findings it is not
    lacks: dict[str, list[str]]  # each known finding -> the constructs it needs that the program lacks

    def as_json(self) -> dict[str, Any]:
        return dict(unlike=self.unlike, lacks=self.lacks)


@dataclass(frozen=True, slots=True)
class KnownProgram:
    """A program of a bug filed before, to judge on the torch under test: where it was filed,
    its source and name, and the Dynamo configuration it failed under."""

    where: str
    program: Program
    configuration: str = DEFAULT
    needs: str = ""  # the configuration its signature says it needs (`Signature.needs`)
    needed: frozenset[str] | None = None  # the constructs its finding's reduction found needed


@dataclass
class KnownBugs:
    """Signatures, canonical digests and failure keys of bugs filed before, each with where
    it was filed; the programs to judge them by again; the signatures they showed on this torch."""

    signatures: dict[Signature, str] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)
    failures: dict[tuple[str, frozenset[str], str], str] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)  # the paths given, as given
    problems: list[str] = field(default_factory=list)  # files skipped, and why
    programs: list[KnownProgram] = field(default_factory=list)
    rejudged: dict[Signature, str] = field(default_factory=dict)  # signatures shown on the torch under test
    configured: dict[Signature, set[str]] = field(default_factory=dict)  # the configurations each was seen under
    # per signature (without a split's part or `unlike`), each known finding of it and the
    # constructs its reduction found needed (None: nothing to tell it by)
    needed: dict[Signature, dict[str, frozenset[str] | None]] = field(default_factory=dict)

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
        if where:
            return Match(where, "signature")
        where = self.rejudged.get(signature) or self.rejudged.get(signature.base())
        return Match(where, "signature on this torch") if where else None

    def configurations_of(self, signature: Signature) -> frozenset[str]:
        """The configurations the known bugs of `signature` were filed or judged again under."""
        return frozenset(self.configured.get(signature, ())) | frozenset(self.configured.get(signature.base(), ()))

    def told_apart(self, signature: Signature, present: Callable[[], Present]) -> Apart | None:
        """Whether a hit of `signature` (known, and naming no place in Dynamo: a wrong result, a
        hang, a signal) is none of the known bugs of it: its program (what it has: `present`,
        asked only when it can tell) lacks a construct each of them needs. None where any known
        bug of it has nothing to tell it by (never reduced, or its reduction found nothing
        needed), or the program has all one of them needs."""
        if signature.location or self.by_signature(signature) is None:
            return None
        entries = self.needed.get(_family(signature))
        if not entries or any(needed is None for needed in entries.values()):
            return None
        has = present()
        lacks: dict[str, list[str]] = {}
        for where, needed in entries.items():
            assert needed is not None
            missing = has.lacks(sorted(needed))
            if not missing:
                return None
            lacks[where] = missing
        digest = hashlib.sha1("\n".join(sorted(Path(where).name for where in lacks)).encode()).hexdigest()[:8]
        return Apart(digest, lacks)

    def _needs(self, signature: Signature, where: str, needed: frozenset[str] | None) -> None:
        entries = self.needed.setdefault(_family(signature), {})
        if entries.get(where, frozenset()) is not None:  # nothing to tell by, from any source, stays so
            entries[where] = needed

    def by_canonical(self, digest: str) -> Match | None:
        where = self.digests.get(digest) if digest else None
        return Match(where, "canonical form") if where else None

    def by_failure(self, finding: Finding) -> Match | None:
        key = failure_key(finding)
        where = self.failures.get(key) if key is not None else None
        return Match(where, "what it needs and how it fails") if where else None

    def match(self, finding: Finding, *, directory: Path | None = None) -> Match | None:
        """Whether `finding` (stored in `directory`) was filed before; never by itself."""
        own = str(directory.resolve()) if directory is not None else ""
        confirmed = bool(finding.reduction.get("confirmed"))
        canonical = finding.reduction.get("canonical", "") if confirmed else ""
        signature = finding.signature
        if signature.needs and confirmed and finding.reduction.get("needs_configuration") is False:
            signature = signature.plain()  # its reduced program fails alike under the defaults: it needs none
        for match in (self.by_signature(signature), self.by_canonical(canonical), self.by_failure(finding)):
            if match is not None and match.where != own:
                return match
        return None

    # -- judging the known programs on the torch under test ------------------------------------
    def rejudge(self, checker: Checker, build: Build, *, backend: str, offered: tuple[str, ...],
                cache: Path | None = None, progress: Callable[[int, int], None] = lambda done, total: None) -> int:
        """Judge every known program on the checker's torch (under the configuration it failed
        under, where this torch has it) and know the signatures they show there; how many
        signatures that added. Each verdict is cached by the program's content, configuration,
        backend and the torch's build, so a second campaign on the same torch pays nothing."""
        cache = cache or cache_root()
        added = 0
        pending: list[tuple[KnownProgram, Path, Future[CheckReply] | None]] = []
        for known in self.programs:
            if known.configuration not in offered:
                continue
            path = cache / f"{_key(known, build, backend)}.json"
            cached = _read_cached(path)
            if cached is None:
                from mutator.judge.check import CheckTask

                pending.append((known, path, checker.submit(CheckTask(known.program,
                                                                      configuration=known.configuration))))
            else:
                added += self._shown(known, cached)
        total = len(pending)
        for done, (known, path, future) in enumerate(pending, start=1):
            assert future is not None
            reply = future.result()
            result = reply.result
            shown: dict[str, Any] = dict(verdict=result.verdict.name if result is not None else "LOST")
            if result is not None and result.verdict.is_finding:
                shown["signature"] = Signature.of(result).as_json()
            if result is not None:
                try:
                    storage.write_json(path, shown)
                except OSError:
                    pass  # a cache we cannot write is a cache we do not have
            added += self._shown(known, shown)
            progress(done, total)
        return added

    def _shown(self, known: KnownProgram, shown: dict[str, Any]) -> int:
        """Know the signature a known program showed on this torch; 1 when it is new here."""
        data = shown.get("signature")
        if not isinstance(data, dict):
            return 0
        signature = Signature(**data)
        if known.needs and not signature.needs:  # judged again under the configuration it needs
            signature = dataclasses.replace(signature, needs=known.needs)
        self.configured.setdefault(signature, set()).add(known.configuration)
        self._needs(signature, known.where, known.needed)
        if signature in self.signatures or signature in self.rejudged:
            return 0
        self.rejudged[signature] = known.where
        return 1

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
        needed = needed_constructs(finding.reduction) if finding.reduction.get("confirmed") else None
        for signature in (finding.signature, *(Signature(**m["signature"]) for m in finding.merged
                                               if isinstance(m.get("signature"), dict))):
            self.signatures.setdefault(signature, where)
            self.configured.setdefault(signature, set()).update({finding.configuration, *finding.configurations})
            self._needs(signature, where, needed)
            if signature.unlike:  # told apart from the known bugs of its run's signature: a bug of that
                self.signatures.setdefault(_family(signature), where)  # signature (`told_apart` tells which)
        if finding.reduction.get("confirmed") and finding.reduction.get("canonical"):
            self.digests.setdefault(finding.reduction["canonical"], where)
        if (key := failure_key(finding)) is not None:
            self.failures.setdefault(key, where)
        reduced_under = finding.reduction.get("configuration", finding.configuration)
        for name, configuration in (("reduced", reduced_under), ("smallest", finding.configuration)):
            self._add_program(record.parent / f"{name}.py", where, configuration, needs=finding.signature.needs,
                              needed=needed)

    def _add_program(self, path: Path, where: str, configuration: str, *, above: str = "", needs: str = "",
                     needed: frozenset[str] | None = None) -> None:
        """A program to judge again (a reproducer's: the part above `above`, its footer)."""
        if not path.is_file() or configuration not in CONFIGURATIONS:
            return
        try:
            source = path.read_text(encoding="utf-8")
            if above:
                source = "".join(source.splitlines(keepends=True)[:_cut(source, above)])
            self.programs.append(KnownProgram(where, Program.from_source(source, str(path)), configuration, needs,
                                              needed))
        except (OSError, UnicodeDecodeError, ProgramError):
            pass  # known by its signature and digests still; there is nothing to judge

    def _add_reproducer(self, path: Path) -> None:
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.problems.append(f"{path}: unreadable ({storage.one_line(exc)}); not known")
            return
        for digest in reproducer_digests(source):
            self.digests.setdefault(digest, str(path.resolve()))
        self._add_program(path, str(path.resolve()), set_in(source), above=REPRO_SEPARATOR)


def _family(signature: Signature) -> Signature:
    """A signature as a run gives it, with the configuration it needs: the known bugs a hit of
    it may be (a split's part and `unlike` are the filer's, not the run's)."""
    return dataclasses.replace(signature, part="", unlike="") if signature.part or signature.unlike else signature


def cache_root() -> Path:
    return Path(os.environ.get("MUTATOR_CACHE") or Path.home() / ".cache" / "mutator") / "known"


def _key(known: KnownProgram, build: Build, backend: str) -> str:
    text = json.dumps([known.program.source, known.configuration, backend, build.torch, build.git, build.python])
    return hashlib.sha1(text.encode()).hexdigest()


def _read_cached(path: Path) -> dict[str, Any] | None:
    try:
        data = storage.read_json(path) if path.exists() else None
    except storage.StorageError:
        return None
    return data if isinstance(data, dict) and "verdict" in data else None


def _cut(source: str, separator: str) -> int:
    lines = source.splitlines(keepends=True)
    return next((i for i, line in enumerate(lines) if line.startswith(separator)), len(lines))


def reproducer_digests(source: str) -> set[str]:
    """Canonical digests of a filed reproducer: its program above the reproducer footer
    (repro.py adds `import torch` first when the program lacked it: with and without)."""
    lines = source.splitlines(keepends=True)
    cut = _cut(source, REPRO_SEPARATOR)
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
