"""Findings: one directory per bug signature, however many programs hit it (DESIGN.md, "Findings").

`findings/<slug>/` (`hangs/<slug>/` for hangs) holds `first.py` (the first program that hit
it), `smallest.py` (the smallest so far), `finding.json` (signature, reason, every hit's
provenance) and a `README.md` a human reads first.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mutator import storage
from mutator.check import CheckResult
from mutator.features import normalize_reason
from mutator.observation import Outcome
from mutator.verdict import Verdict

MAX_STORED_HITS = 1000  # provenance kept per finding; the count goes on beyond
_UNSAFE = re.compile(r"[^A-Za-z0-9_.]+")
SEVERITY = {  # TAXONOMY.md, "Symptoms": what is not a frontend bug is kept apart
    Verdict.FULLGRAPH_BREAK: "low: Dynamo refuses the program under fullgraph=True (a graph break, not a wrong result)",
    Verdict.BACKEND_FAILURE: "out of scope: the backend failed, not the frontend; check whether backend='eager' fails too",
}


@dataclass(frozen=True, slots=True)
class Signature:
    """A bug's identity, built from structured fields (like Hypothesis's InterestingOrigin)."""

    kind: str  # the Verdict's name
    exception: str = ""  # exception type (or signal) behind a crash
    location: str = ""  # gb_type, innermost torch/_dynamo frame (file:function), or a guard's shape
    observation: str = ""  # for mismatches: which observation diverged, and how

    @classmethod
    def of(cls, result: CheckResult) -> Signature:
        judgement = result.judgement
        verdict = judgement.verdict
        exc = judgement.exception
        if verdict is Verdict.MISMATCH:
            divergence = judgement.divergence
            swallowed = judgement.eager_exception.short_type if judgement.eager_exception else ""
            observed = ":".join(p for p in (divergence.observation, divergence.aspect, divergence.kind) if p) \
                if divergence else ""
            return cls(verdict.name, exception=swallowed, observation=observed)
        if verdict is Verdict.RECOMPILE_STORM:
            stats = result.compiled.observation.compile
            reasons = stats.recompile_reasons if stats else ()
            limit = "limit" if stats and stats.recompile_limit_hit else "repeat"
            return cls(verdict.name, location=f"{limit}:{normalize_reason(reasons[-1]) if reasons else ''}")
        if verdict is Verdict.HANG:
            return cls(verdict.name)
        if exc is None:  # died by a signal, exited, ran out of memory
            run = result.compiled
            what = f"signal {run.signal}" if run.outcome is Outcome.SIGNALLED else run.outcome.value
            return cls(verdict.name, exception=what)
        if verdict is Verdict.BACKEND_FAILURE:
            inner = exc.chain[0].rsplit(".", 1)[-1] if exc.chain else exc.short_type
            return cls(verdict.name, exception=inner)
        location = exc.gb_type or (f"{exc.dynamo_frame.filename}:{exc.dynamo_frame.function}"
                                   if exc.dynamo_frame else "")
        return cls(verdict.name, exception=exc.short_type, location=location)

    @property
    def verdict(self) -> Verdict:
        return Verdict[self.kind]

    def slug(self) -> str:
        """A readable, filesystem-safe, unique directory name."""
        parts = [self.kind.lower(), self.exception, self.location.rsplit("/", 1)[-1], self.observation]
        readable = _UNSAFE.sub("-", "-".join(p for p in parts if p)).strip("-")[:60].rstrip("-")
        digest = hashlib.sha1(repr(self).encode()).hexdigest()[:8]
        return f"{readable}-{digest}"

    def describe(self) -> str:
        return " / ".join(p for p in (self.kind, self.exception, self.location, self.observation) if p)


@dataclass
class Finding:
    signature: Signature
    reason: str
    directory: str  # relative to the campaign directory
    hits: int = 0
    smallest_size: int = 0
    first_seen: float = 0.0  # campaign seconds
    history: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return dict(signature=asdict(self.signature), reason=self.reason, directory=self.directory, hits=self.hits,
                    smallest_size=self.smallest_size, first_seen=self.first_seen, history=self.history)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        return cls(signature=Signature(**data["signature"]), reason=data["reason"], directory=data["directory"],
                   hits=data["hits"], smallest_size=data["smallest_size"], first_seen=data["first_seen"],
                   history=list(data.get("history", ())))


class FindingStore:
    """Save, fetch and count findings; the fuzzer decides what to record."""

    def __init__(self, root: Path, *, torch_version: str = "", backend: str = "eager") -> None:
        self.root = root
        self.torch_version = torch_version
        self.backend = backend
        self.findings: dict[Signature, Finding] = {}
        for path in sorted([*root.glob("findings/*/finding.json"), *root.glob("hangs/*/finding.json")]):
            finding = Finding.from_json(storage.read_json(path))
            self.findings[finding.signature] = finding

    def record(self, result: CheckResult, *, provenance: str, parent: int | None, elapsed: float) -> tuple[Finding, bool]:
        """File one hit; returns the finding and whether it is new."""
        signature = Signature.of(result)
        program = result.program
        size = len(program.source)
        finding = self.findings.get(signature)
        is_new = finding is None
        if finding is None:
            group = "hangs" if signature.verdict is Verdict.HANG else "findings"
            finding = Finding(signature, result.reason, f"{group}/{signature.slug()}", smallest_size=size,
                              first_seen=round(elapsed, 2))
            storage.write_text(self.root / finding.directory / "first.py", program.source)
        directory = self.root / finding.directory
        if is_new or size < finding.smallest_size:
            finding.smallest_size = size
            finding.reason = result.reason
            storage.write_text(directory / "smallest.py", program.source)
            storage.write_text(directory / "README.md", self._readme(finding, result))
        finding.hits += 1
        if len(finding.history) < MAX_STORED_HITS:
            finding.history.append(dict(at=round(elapsed, 2), provenance=provenance, parent=parent, size=size,
                                        digest=program.digest, wall=round(time.time(), 1)))
        storage.write_json(directory / "finding.json", finding.as_json())
        self.findings[signature] = finding
        return finding, is_new

    def count_by_kind(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for signature in self.findings:
            counts[signature.kind] = counts.get(signature.kind, 0) + 1
        return counts

    def _readme(self, finding: Finding, result: CheckResult) -> str:
        judgement = result.judgement
        lines = [
            f"# {finding.signature.kind}: {finding.signature.describe()}",
            "",
            f"- **reason**: {judgement.reason}",
            f"- **severity**: {SEVERITY.get(finding.signature.verdict, 'a frontend bug')}",
            f"- **reproduce**: `mutate run {self.root / finding.directory}/smallest.py` (backend `{self.backend}`)",
            f"- **programs**: `smallest.py` ({finding.smallest_size} characters), `first.py` (first hit); "
            "every hit's provenance is in `finding.json`",
            f"- **torch**: {self.torch_version or 'unknown'}",
            "",
        ]
        if judgement.exception is not None:
            exc = judgement.exception
            lines += ["## Compiled run's exception", "", "```", f"{exc.type_name}: {exc.message.strip()[:3000]}", "```", ""]
            if exc.dynamo_frame:
                lines += [f"Innermost Dynamo frame: `{exc.dynamo_frame}`", ""]
        if judgement.divergence is not None:
            lines += ["## Divergence", "", f"{judgement.divergence.where}: {judgement.divergence.detail}", ""]
        if result.compiled.stderr_tail.strip() and judgement.verdict in (Verdict.CRASH, Verdict.HANG):
            lines += ["## End of the compiled run's stderr", "", "```", result.compiled.stderr_tail.strip()[-3000:],
                      "```", ""]
        lines += ["## Smallest program", "", "```python", result.program.source.rstrip(), "```", ""]
        return "\n".join(lines)
