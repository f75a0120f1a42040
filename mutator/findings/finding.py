"""A finding: one signature and what its hits left, as `finding.json` records it.

A signature can hide distinct bugs (two value mismatches in results of the same type look
alike), so beside the smallest program a finding keeps the smallest program of each distinct
trigger (`variants/`). `FindingStore` (`mutator.findings.store`) keeps them on disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mutator.core.configurations import DEFAULT
from mutator.findings.signature import Signature
from mutator.mutation.operator import REPAIR_PREFIX, family_of

MAX_STORED_HITS = 1000  # provenance kept per finding; the count goes on beyond
MAX_VARIANTS = 16  # programs kept per finding, one per distinct trigger
SWEEP_PREFIX = "sweep:"  # the provenance of a queue entry checked as it is under another configuration


def trigger(provenance: str) -> str:
    """What made a program hit a signature: the seed itself, a configuration its queue entry
    (which passed under another) was swept under, or the taxonomy families of the operators
    of its last mutation step (its parent passed, so they caused the hit)."""
    if provenance.startswith("seed:"):
        return "seed " + provenance.removeprefix("seed:").rsplit("/", 1)[-1].removesuffix(".py")
    if provenance.startswith(SWEEP_PREFIX):
        return "configuration " + provenance.removeprefix(SWEEP_PREFIX).split(":", 1)[0]
    return "+".join(sorted({family_of(step) for step in provenance.split("+")
                            if step and not step.startswith(REPAIR_PREFIX)}))  # a repair is no trigger


@dataclass
class Finding:
    """One signature. A signature can hide distinct bugs (two value mismatches in results of the
    same type look alike), so beside the smallest program it keeps the smallest program of
    each distinct trigger (`variants/`), up to MAX_VARIANTS."""

    signature: Signature
    reason: str
    directory: str  # relative to the campaign directory
    hits: int = 0
    smallest_size: int = 0
    first_seen: float = 0.0  # campaign seconds
    history: list[dict[str, Any]] = field(default_factory=list)
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)  # trigger -> file, hits, size, reason
    details: str = ""  # the README's account of the smallest hit (exception or divergence, program)
    reduction: dict[str, Any] = field(default_factory=dict)  # what `mutate reduce` made of smallest.py
    merged: list[dict[str, Any]] = field(default_factory=list)  # findings found to be this one after reduction
    known_from: str = ""  # a synced peer that had this signature first: not new here (AFL-style sync)
    known: dict[str, str] = field(default_factory=dict)  # filed before, outside this campaign (`mutator.findings.known`)
    split_from: str = ""  # the finding whose variant this was, before reduction told them apart
    split_into: list[str] = field(default_factory=list)  # findings split off this one (their directories)
    versions: dict[str, Any] = field(default_factory=dict)  # on which torches it fails (`mutator.report.versions`)
    # the smallest hit's divergence, when its program's own tests passed over it (`mutator.judge.missed`)
    missed_by_tests: dict[str, str] = field(default_factory=dict)
    # the Dynamo configuration smallest.py failed under (`mutator.core.configurations`): what its
    # reduction, reproducer and version checks run under; and the hits under each configuration
    configuration: str = DEFAULT
    configurations: dict[str, int] = field(default_factory=dict)
    # its signature is a known one's, but its first hit lacked what each known bug of it needs
    # (`mutator.findings.known.Apart`): which known findings, and what of theirs it lacked
    apart: dict[str, Any] = field(default_factory=dict)

    @property
    def is_new(self) -> bool:
        """Found here first: neither a synced peer's nor a bug filed before (--known)."""
        return not self.known_from and not self.known

    def as_json(self) -> dict[str, Any]:
        data = dict(signature=self.signature.as_json(), reason=self.reason, directory=self.directory, hits=self.hits,
                    smallest_size=self.smallest_size, first_seen=self.first_seen, variants=self.variants,
                    details=self.details, reduction=self.reduction, merged=self.merged, known_from=self.known_from)
        data.update({key: value for key, value in (("known", self.known), ("split_from", self.split_from),
                                                   ("split_into", self.split_into), ("versions", self.versions),
                                                   ("missed_by_tests", self.missed_by_tests),
                                                   ("configurations", self.configurations),
                                                   ("apart", self.apart))
                     if value})
        data.update(configuration=self.configuration)
        return dict(data, history=self.history)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        return cls(signature=Signature(**data["signature"]), reason=data["reason"], directory=data["directory"],
                   hits=data["hits"], smallest_size=data["smallest_size"], first_seen=data["first_seen"],
                   history=list(data.get("history", ())), variants=dict(data.get("variants", {})),
                   details=data.get("details", ""), reduction=dict(data.get("reduction", {})),
                   merged=list(data.get("merged", [])), known_from=data.get("known_from", ""),
                   known=dict(data.get("known", {})), split_from=data.get("split_from", ""),
                   split_into=list(data.get("split_into", [])), versions=dict(data.get("versions", {})),
                   missed_by_tests=dict(data.get("missed_by_tests", {})),
                   configuration=str(data.get("configuration", DEFAULT)),
                   configurations={str(k): int(v) for k, v in data.get("configurations", {}).items()},
                   apart=dict(data.get("apart", {})))
