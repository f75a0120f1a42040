"""Findings: one directory per bug signature, however many programs hit it (DESIGN.md, "Findings").

`findings/<slug>/` (`hangs/<slug>/` for hangs) holds `first.py` (the first program that hit
it), `smallest.py` (the smallest so far), `variants/` (the smallest program of each distinct
trigger), `finding.json` (signature, reason, every hit's provenance) and a `README.md` a
human reads first.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mutator.core import storage
from mutator.judge.check import CheckResult
from mutator.mutation.operator import REPAIR_PREFIX, family_of
from mutator.core.observation import Outcome
from mutator.core.verdict import Verdict

if TYPE_CHECKING:
    from mutator.mutation.mutator import Recipe

MAX_STORED_HITS = 1000  # provenance kept per finding; the count goes on beyond
MAX_VARIANTS = 16  # programs kept per finding, one per distinct trigger
_UNSAFE = re.compile(r"[^A-Za-z0-9_.]+")
SEVERITY = {  # TAXONOMY.md, "Symptoms": what is not a frontend bug is kept apart
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
        if verdict in (Verdict.RECOMPILE_STORM, Verdict.SPECIALIZATION):
            return cls(verdict.name, exception=exc.short_type if exc else "", location=judgement.key)
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

    def base(self) -> Signature:
        """The signature a run gives: without the part a split gave it."""
        return Signature(self.kind, self.exception, self.location, self.observation) if self.part else self

    def as_json(self) -> dict[str, str]:
        data = asdict(self)
        if not self.part:  # as before splits existed: older readers and peers take it as it is
            del data["part"]
        return data

    def slug(self) -> str:
        """A readable, filesystem-safe, unique directory name."""
        parts = [self.kind.lower(), self.exception, self.location.rsplit("/", 1)[-1], self.observation]
        readable = _UNSAFE.sub("-", "-".join(p for p in parts if p)).strip("-")[:60].rstrip("-")
        digest = hashlib.sha1(repr(self).encode()).hexdigest()[:8]
        return f"{readable}-{digest}"

    def describe(self) -> str:
        described = " / ".join(p for p in (self.kind, self.exception, self.location, self.observation) if p)
        return f"{described} ({self.part})" if self.part else described


def trigger(provenance: str) -> str:
    """What made a program hit a signature: the seed itself, or the taxonomy families of
    the operators of its last mutation step (its parent passed, so they caused the hit)."""
    if provenance.startswith("seed:"):
        return "seed " + provenance.removeprefix("seed:").rsplit("/", 1)[-1].removesuffix(".py")
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

    @property
    def is_new(self) -> bool:
        """Found here first: neither a synced peer's nor a bug filed before (--known)."""
        return not self.known_from and not self.known

    def as_json(self) -> dict[str, Any]:
        data = dict(signature=self.signature.as_json(), reason=self.reason, directory=self.directory, hits=self.hits,
                    smallest_size=self.smallest_size, first_seen=self.first_seen, variants=self.variants,
                    details=self.details, reduction=self.reduction, merged=self.merged, known_from=self.known_from)
        data.update({key: value for key, value in (("known", self.known), ("split_from", self.split_from),
                                                   ("split_into", self.split_into)) if value})
        return dict(data, history=self.history)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        return cls(signature=Signature(**data["signature"]), reason=data["reason"], directory=data["directory"],
                   hits=data["hits"], smallest_size=data["smallest_size"], first_seen=data["first_seen"],
                   history=list(data.get("history", ())), variants=dict(data.get("variants", {})),
                   details=data.get("details", ""), reduction=dict(data.get("reduction", {})),
                   merged=list(data.get("merged", [])), known_from=data.get("known_from", ""),
                   known=dict(data.get("known", {})), split_from=data.get("split_from", ""),
                   split_into=list(data.get("split_into", [])))


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
               recipe: Recipe | None = None) -> tuple[Finding, bool]:
        """File one hit; returns the finding and whether it is new. `recipe`: how the hit was
        built from its parent, kept with the program of its trigger. A signature a synced peer
        filed first is filed here too (nothing found is dropped) but is not new: it says whose
        it is."""
        signature = Signature.of(result)
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
        smallest = created or size < finding.smallest_size
        if smallest:
            finding.smallest_size = size
            finding.reason = result.reason
            storage.write_text(directory / "smallest.py", program.source)
            finding.details = details(result)
        kept = self._record_variant(finding, result, trigger(provenance), recipe)
        if len(finding.history) < MAX_STORED_HITS:
            finding.history.append(dict(at=round(elapsed, 2), provenance=provenance, parent=parent, size=size,
                                        digest=program.digest, wall=round(time.time(), 1)))
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
        variant.update(size=size, reason=result.reason[:300])
        if recipe is not None:
            variant["recipe"] = recipe.as_json()
        else:
            variant.pop("recipe", None)
        storage.write_text(self.root / finding.directory / variant["file"], result.program.source)
        return True

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

    def readme(self, finding: Finding) -> str:
        lines = [
            f"# {finding.signature.kind}: {finding.signature.describe()}",
            "",
            f"- **reason**: {finding.reason}",
            f"- **severity**: {SEVERITY.get(finding.signature.verdict, 'a frontend bug')}",
            f"- **reproduce**: "
            + (f"`python {self.root / finding.directory}/repro.py` (needs only torch), or " if
               finding.reduction.get("repro_reproduces") else "")
            + f"`mutate run {self.root / finding.directory}/smallest.py` (backend `{self.backend}`)",
            f"- **programs**: `smallest.py` ({finding.smallest_size} characters), `first.py` (first hit), "
            f"`variants/` (the smallest of each trigger); every hit's provenance is in `finding.json`",
            f"- **hits**: {finding.hits}",
            *([f"- **known from**: `{finding.known_from}`, a synced instance that filed this signature first"]
              if finding.known_from else []),
            *([f"- **known**: filed before in `{finding.known.get('where', '')}` (same {finding.known.get('by', '')})"]
              if finding.known else []),
            *([f"- **split from**: `{finding.split_from}`: a variant of it that reduced to a different program"]
              if finding.split_from else []),
            *(["- **split into**: " + ", ".join(f"`{d}`" for d in finding.split_into)
               + " (variants that reduced to another bug)"] if finding.split_into else []),
            f"- **torch**: {self.torch_version or 'unknown'}",
            "",
            *_reduction_lines(finding.reduction),
            *_merged_lines(finding.merged),
            "## Variants: the smallest program per trigger",
            "",
            "A trigger is the seed, or the taxonomy families of the mutation that turned a passing parent into "
            "this finding. Different triggers under one signature may be different bugs.",
            "",
            "| trigger | hits | program | characters |",
            "| --- | ---: | --- | ---: |",
        ]
        for key, variant in sorted(finding.variants.items(), key=lambda kv: (-kv[1]["hits"], kv[0])):
            lines.append(f"| {key} | {variant['hits']} | `{variant['file']}` | {variant['size']} |")
        if len(finding.variants) >= MAX_VARIANTS:
            lines.append(f"\nOnly the first {MAX_VARIANTS} triggers keep a program; later ones count in `hits`.")
        return "\n".join(lines) + "\n\n" + finding.details


def _reduction_lines(reduction: dict[str, Any]) -> list[str]:
    """The README's section on `reduced.py`, `repro.py` and the ablation, when reduced."""
    if not reduction:
        return []
    lines = ["## Reduced", "",
             f"`reduced.py`: {reduction['lines_before']} -> {reduction['lines_after']} lines "
             f"({reduction['chars_before']} -> {reduction['chars_after']} characters) in {reduction['seconds']:.0f} s, "
             f"{reduction['checks']} checks; the signature holds in fresh runs: "
             f"{'yes' if reduction['confirmed'] else 'no, so nothing was written (smallest.py stands)'}.", ""]
    repro = reduction.get("repro")
    if repro:
        lines += [f"`repro.py` (needs only torch): {repro}", ""]
    if reduction.get("matters"):  # report.md has the whole section
        lines += [f"What matters {matters_summary(reduction['matters'])}.", ""]
    if reduction.get("ablation"):
        lines += [f"Ablation: **{reduction['label']}**", "", ablation_table(reduction["ablation"]), ""]
    lines += ["```python", reduction["source"].rstrip(), "```", ""]
    return lines


def matters_summary(found: dict[str, Any]) -> str:
    """`mutator.reduce.matters`' analysis (as JSON) in one line, for the README and `mutate
    reduce`: "(8 variants, 22 runs, 1 s): needs a `dict` subclass; not needed: `vars`"."""
    not_needed = found.get("not_needed", []) + found.get("removed", [])
    return (f"({len(found.get('rows', []))} variants, {found.get('checks', 0)} runs, {found.get('seconds', 0):.0f} s): "
            f"needs {', '.join(found.get('needed', [])) or 'nothing a variant could tell'}"
            + (f"; not needed: {', '.join(not_needed)}" if not_needed else ""))


def ablation_table(rows: list[dict[str, Any]]) -> str:
    """Ablation rows (`mutator.reduce.ablation`, as JSON) as a Markdown table."""
    lines = ["| setting | verdict | same signature |", "| --- | --- | --- |"]
    lines += [f"| `{row['setting']}` | {row['verdict']} | {'yes' if row['same_signature'] else 'no'} |" for row in rows]
    return "\n".join(lines)


def _merged_lines(merged: list[dict[str, Any]]) -> list[str]:
    if not merged:
        return []
    lines = ["## Merged after reduction", "",
             "These signatures reduced to the same program (up to names and literals) as this finding; their "
             "directories are in `merged/`, and their later hits count here.", "",
             "| signature | hits | directory |", "| --- | ---: | --- |"]
    for entry in merged:
        signature = Signature(**entry["signature"])
        lines.append(f"| {signature.describe()} | {entry['hits']} | `{entry['directory']}` |")
    return lines + [""]


def details(result: CheckResult) -> str:
    """The smallest hit's exception or divergence and program, in Markdown."""
    judgement = result.judgement
    lines = []
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
