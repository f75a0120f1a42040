"""What `mutate harvest` and `mutate generate` share when they keep a checked program: the
programs already in the output directory, known by their text and their coverage, the
rule that a new one repeating either is a duplicate, and how one is written (the program,
then its JSON sidecar; never a program without its sidecar)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from mutator.core import storage
from mutator.core.program import ProgramError, read_source
from mutator.judge.check import CheckResult

HEADER = "# Harvested by mutator from "  # the first line of a harvested program


def body_digest(source: str) -> str:
    """The program's identity without its provenance header (which carries a time)."""
    lines = source.splitlines(keepends=True)
    body = "".join(lines[2:]) if lines and lines[0].startswith(HEADER) else source
    return hashlib.sha1(body.encode()).hexdigest()


def invalid_kind(result: CheckResult) -> str:
    """How an INVALID program is counted: the type of the exception it failed with eagerly, or
    how its eager run ended."""
    exc = result.judgement.eager_exception or result.eager.uncaught
    return exc.short_type if exc is not None else result.eager.outcome.value


class KnownPrograms:
    """The programs of an output directory, by text digest and by coverage features: those
    there when it was read (a sidecar's `source_digest` and `features`, or the file's text)
    and those kept since."""

    def __init__(self, out: Path) -> None:
        self._out = out
        self._sources: set[str] = set()
        self._features: set[frozenset[int]] = set()
        for path in sorted(out.glob("*.py")) if out.is_dir() else []:
            sidecar_path = path.with_suffix(".json")
            sidecar = storage.read_json(sidecar_path) if sidecar_path.exists() else {}
            sidecar = sidecar if isinstance(sidecar, dict) else {}
            try:
                self._sources.add(sidecar.get("source_digest") or body_digest(read_source(path)))
            except ProgramError:
                pass  # unreadable: it cannot be a duplicate of anything
            if sidecar.get("features"):
                self._features.add(frozenset(sidecar["features"]))

    def digests(self) -> frozenset[str]:
        """The text digests known now (a copy: for threads that must not see later additions)."""
        return frozenset(self._sources)

    def repeats(self, digest: str, result: CheckResult) -> bool:
        """Whether a checked program repeats a known one: the same text, or (when its compiled
        run recorded coverage) the same features."""
        return digest in self._sources or bool(result.compiled.features) and result.features in self._features

    def keep(self, path: Path, source: str, sidecar: dict[str, object], digest: str, result: CheckResult) -> None:
        """Write the program and its sidecar (the features added to it), and know them from now
        on; raises OSError, having removed the program again, when either cannot be written."""
        try:
            storage.write_text(path, source)
            storage.write_json(path.with_suffix(".json"), {**sidecar, "features": sorted(result.features)})
        except OSError:
            path.unlink(missing_ok=True)  # a program without its sidecar would pass for one without features
            raise
        self._sources.add(digest)
        self._features.add(result.features)
