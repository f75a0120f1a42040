"""Where the loop's bug verdicts go (docs/design.md, "campaign"): a finding of the campaign's
store, or, for a bug filed before (`mutate fuzz --known`), a count in known.json.

The loop's thread owns the findings: it files hits here, and here it records what a
reduction beside the loop made of a finding (merging findings that turn out to be one,
marking one that reduced to a program filed before).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mutator.findings.finding import Finding
from mutator.findings.known import Apart, KnownHits, mark
from mutator.findings.needs import Present
from mutator.findings.signature import Signature
from mutator.findings.store import FindingStore
from mutator.judge.check import CheckResult
from mutator.mutation.mutator import Recipe
from mutator.reduce.constructs import construct_names
from mutator.reduce.driver import ReductionReport, record_reduction

_APART_MEMORY = 256  # hits whose telling apart is remembered (the checker's thread asks, then the loop's)
_UNASKED = object()


class Filing:
    def __init__(self, store: FindingStore, known: KnownHits | None = None) -> None:
        self.store = store
        self.known = known  # bugs filed before (--known): their hits are counted, not filed
        self._apart_memory: dict[tuple[str, str], Apart | None] = {}

    def file(self, result: CheckResult, *, provenance: str, parent: int | None, elapsed: float,
             recipe: Recipe | None = None) -> tuple[Finding, bool] | None:
        """File a bug verdict: its finding and whether it is a new one; None when it is a hit of
        a signature filed before that this campaign has not filed itself (counted in known.json).
        A hit of a known signature that names no place, whose program lacks what each known bug
        of it needs, is filed as a bug of its own (`Signature.unlike`)."""
        apart = self._apart(result)
        if apart is None:
            if self._count_known(result, provenance, elapsed):
                return None
            return self.store.record(result, provenance=provenance, parent=parent, elapsed=elapsed, recipe=recipe)
        signature = dataclasses.replace(Signature.of(result), unlike=apart.unlike)
        finding, is_new = self.store.record(result, provenance=provenance, parent=parent, elapsed=elapsed,
                                            recipe=recipe, signature=signature)
        if not finding.apart:
            finding.apart = apart.as_json()
            self.store.save(finding)
        return finding, is_new

    def counts_as_known(self, result: CheckResult) -> bool:
        """Whether `file` would only count this bug verdict as a hit of a bug filed before (its
        signature known, and not filed here, and not told apart): what the checker need not
        confirm. Safe to ask from another thread: it only reads (and remembers what it read)."""
        if self.known is None:
            return False
        signature = Signature.of(result)
        return self._filed(signature) is None and self.known.known.by_signature(signature) is not None \
            and self._apart(result) is None

    def _apart(self, result: CheckResult) -> Apart | None:
        """Whether a hit of a known signature that names no place (and not filed here) is none of
        the known bugs of it: its program lacks a construct each of them needs
        (`KnownBugs.told_apart`). Remembered per program and configuration."""
        if self.known is None:
            return None
        signature = Signature.of(result)
        if signature.location or self._filed(signature) is not None:
            return None
        key = (result.program.digest, result.configuration)
        remembered = self._apart_memory.get(key, _UNASKED)
        if remembered is not _UNASKED:
            return remembered  # type: ignore[return-value]

        def present() -> Present:
            stats = result.compiled.observation.compile
            return Present.of(construct_names(result.program.source), result.configuration,
                              graph_broke=bool(stats is not None and stats.graph_breaks))

        apart = self.known.known.told_apart(signature, present)
        if len(self._apart_memory) >= _APART_MEMORY:
            self._apart_memory.clear()
        self._apart_memory[key] = apart
        return apart

    def taken(self, result: CheckResult) -> bool:
        """Whether a bug verdict's signature (under a configuration other than the defaults)
        is a bug's that was not seen under its configuration: one this campaign filed under
        another configuration, or a known one filed under others. The checker then tells by a
        compiled run under the defaults whether the verdict needs its configuration (a bug of
        its own) or fails there alike (a hit of that bug). Safe to ask from another thread.

        Only for signatures that name no place in Dynamo (a wrong result, a hang, a signal): a
        crash in the same Dynamo function is the same bug whatever configuration led there,
        while every wrong tensor value of any program is "MISMATCH / result:value:Tensor"."""
        signature = Signature.of(result)
        if signature.location:
            return False
        finding = self._filed(signature)
        if finding is not None:
            return finding.configuration != result.configuration
        if self.known is None or self.known.known.by_signature(signature) is None:
            return False
        return result.configuration not in self.known.known.configurations_of(signature)

    def _filed(self, signature: Signature) -> Finding | None:
        """This campaign's finding of `signature`, or of the signature it was merged into."""
        return self.store.findings.get(self.store.aliases.get(signature, signature))

    @staticmethod
    def same_bug(one: CheckResult, other: CheckResult) -> bool:
        """Whether two check results are one bug: the same signature."""
        return Signature.of(one) == Signature.of(other)

    def _count_known(self, result: CheckResult, provenance: str, elapsed: float) -> bool:
        if self.known is None:
            return False
        signature = Signature.of(result)
        if self._filed(signature) is not None:
            return False  # filed here already (before --known was given): it goes on counting here
        return self.known.count(signature, provenance=provenance, size=len(result.program.source), elapsed=elapsed)

    def reduced(self, finding: Finding, outcome: ReductionReport) -> Finding:
        """Record a finished reduction in `finding`; the finding that stands (another, when the
        two reduced to one program)."""
        finding = record_reduction(self.store, finding, outcome)
        if self.known is not None and not finding.known and mark(finding, self.known.known):
            self.store.save(finding)  # reduced to a bug filed before: not new after all
        return finding

    def flush(self) -> None:
        self.store.flush()
        if self.known is not None:
            self.known.save()

    def snapshot(self) -> dict[str, Any]:
        findings = self.store.findings.values()
        return dict(
            findings=sum(1 for f in findings if f.is_new),
            findings_by_kind=self.store.count_by_kind(),
            known_from_peers=sum(1 for f in findings if f.known_from),
            known_signatures=len(self.known.hits) if self.known is not None else 0,
            known_findings=sum(1 for f in findings if f.known),
            # hits of known signatures filed as bugs of their own (`_apart`): all hits of those
            told_apart=sum(f.hits for f in findings if f.signature.unlike),
        )
