"""A bug's identity: the `Signature` of a check result, and the severity of each kind.

One signature is one finding directory, however many programs hit it (docs/design.md,
"findings"): verdict kind, exception type, `gb_type` or innermost `torch/_dynamo` frame,
and for mismatches which observation diverged and how.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import asdict, dataclass

from mutator.core.observation import Outcome
from mutator.core.verdict import Verdict
from mutator.judge.check import CheckResult

_UNSAFE = re.compile(r"[^A-Za-z0-9_.]+")

SEVERITY = {  # mutator/llm/taxonomy.md, "Symptoms": what is not a frontend bug is kept apart
    Verdict.FULLGRAPH_BREAK: "low: Dynamo refuses a graph break where the program asked for none (fullgraph=True, "
                             "nopython=True or error_on_graph_break(True)): a graph break, not a wrong result",
    Verdict.SPECIALIZATION: "low: specialisation Dynamo documents (recompiles on a Python scalar or attribute that "
                            "changes on every call, identity guards on fresh objects, a dimension marked dynamic "
                            "that the code specialises): not a wrong result",
    Verdict.BACKEND_FAILURE: "out of scope: the backend failed, not the frontend; check whether backend='eager' fails too",
}


@dataclass(frozen=True, slots=True)
class Signature:
    """A bug's identity, built from structured fields (like Hypothesis's InterestingOrigin)."""

    kind: str  # the Verdict's name
    exception: str = ""  # exception type (or signal) behind a crash
    location: str = ""  # gb_type, innermost torch/_dynamo frame (file:function), or a guard's shape
    observation: str = ""  # for mismatches: which observation diverged, and how
    part: str = ""  # a bug split off a finding whose variants reduced to different programs ("split1", ...)
    # the Dynamo configuration the bug needs, where a bug that does not need it (known, or filed
    # first) has the rest of this signature: a wrong result of graph deduplication is not the
    # wrong result a program gives under Dynamo's defaults, though both are "result:value:Tensor"
    needs: str = ""
    # the known bugs of the rest of this signature it cannot be (a digest of their findings): a
    # signature that names no place is every wrong value of any program, so a hit of a known one
    # whose program lacks a construct each known bug of it needs is a bug of its own
    # (`mutator.findings.known.KnownBugs.told_apart`); set by the campaign that filed it, not by a run
    unlike: str = ""

    @classmethod
    def of(cls, result: CheckResult) -> Signature:
        judgement = result.judgement
        verdict = judgement.verdict
        exc = judgement.exception
        needs = result.configuration if result.needs_configuration else ""
        if verdict is Verdict.MISMATCH:
            divergence = judgement.divergence
            swallowed = judgement.eager_exception.short_type if judgement.eager_exception else ""
            observed = ":".join(p for p in (divergence.observation, divergence.aspect, divergence.kind) if p) \
                if divergence else ""
            return cls(verdict.name, exception=swallowed, observation=observed, needs=needs)
        if verdict in (Verdict.RECOMPILE_STORM, Verdict.SPECIALIZATION):
            return cls(verdict.name, exception=exc.short_type if exc else "", location=judgement.key, needs=needs)
        if verdict is Verdict.HANG:
            return cls(verdict.name, needs=needs)
        if exc is None:  # died by a signal, exited, ran out of memory
            run = result.compiled
            what = f"signal {run.signal}" if run.outcome is Outcome.SIGNALLED else run.outcome.value
            return cls(verdict.name, exception=what, needs=needs)
        if verdict is Verdict.BACKEND_FAILURE:
            inner = exc.chain[0].rsplit(".", 1)[-1] if exc.chain else exc.short_type
            return cls(verdict.name, exception=inner, needs=needs)
        location = exc.gb_type or (f"{exc.dynamo_frame.filename}:{exc.dynamo_frame.function}"
                                   if exc.dynamo_frame else "")
        return cls(verdict.name, exception=exc.short_type, location=location, needs=needs)

    @property
    def verdict(self) -> Verdict:
        return Verdict[self.kind]

    def base(self) -> Signature:
        """The signature a run gives: without the part a split gave it (with the configuration
        it needs: a run tells that)."""
        return dataclasses.replace(self, part="") if self.part else self

    def as_run(self) -> Signature:
        """What a run of the finding's program gives, to reproduce it by (a reduction, the
        ablation, other versions): neither the part a split gave it, nor the configuration it
        needs (a run under that configuration is not checked under the defaults), nor the known
        bugs it was told apart from (a run knows none)."""
        return dataclasses.replace(self, part="", needs="", unlike="") if self.part or self.needs or self.unlike \
            else self

    def plain(self) -> Signature:
        """Without the configuration it needs: the signature of a run under it that was not
        checked under Dynamo's defaults."""
        return dataclasses.replace(self, needs="") if self.needs else self

    def as_json(self) -> dict[str, str]:
        data = asdict(self)
        for key in ("part", "needs", "unlike"):  # as before they existed: older readers and peers take it as it is
            if not data[key]:
                del data[key]
        return data

    def slug(self) -> str:
        """A readable, filesystem-safe, unique directory name."""
        parts = [self.kind.lower(), self.exception, self.location.rsplit("/", 1)[-1], self.observation,
                 f"needs-{self.needs}" if self.needs else "", "unlike-known" if self.unlike else ""]
        readable = _UNSAFE.sub("-", "-".join(p for p in parts if p)).strip("-")[:60].rstrip("-")
        # the digest of a signature without `needs` and `unlike` is what it was before they
        # existed, so that a campaign's directories keep their names across versions
        digest = hashlib.sha1(repr(self).replace(", unlike=''", "").replace(", needs=''", "").encode()) \
            .hexdigest()[:8]
        return f"{readable}-{digest}"

    def describe(self) -> str:
        described = " / ".join(p for p in (self.kind, self.exception, self.location, self.observation) if p)
        if self.needs:
            described += f" [needs {self.needs}]"
        if self.unlike:
            described += " [unlike the known bugs of it]"
        return f"{described} ({self.part})" if self.part else described
