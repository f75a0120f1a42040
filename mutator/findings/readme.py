"""The README.md of a finding directory (`findings/<signature>/README.md`): the reason,
severity, how to reproduce, the programs kept, the reduction (with what matters in a line
and the ablation), merged findings, the variants and the smallest hit's details."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mutator.core.configurations import CONFIGURATIONS, DEFAULT
from mutator.core.verdict import Verdict
from mutator.findings.finding import MAX_VARIANTS, Finding
from mutator.findings.signature import SEVERITY, Signature
from mutator.judge.check import CheckResult
from mutator.judge.missed import missed_by_tests, missed_sentence


def readme(finding: Finding, *, root: Path, backend: str, torch_version: str) -> str:
    """The README.md of a finding directory: what a human reads first."""
    lines = [
        f"# {finding.signature.kind}: {finding.signature.describe()}",
        "",
        f"- **reason**: {finding.reason}",
        f"- **severity**: {SEVERITY.get(finding.signature.verdict, 'a frontend bug')}",
        f"- **reproduce**: "
        + (f"`python {root / finding.directory}/repro.py` (needs only torch), or " if
           finding.reduction.get("repro_reproduces") else "")
        + f"`mutate run {root / finding.directory}/smallest.py`"
        + (f" --config {finding.configuration}" if finding.configuration != DEFAULT else "")
        + f" (backend `{backend}`)",
        *_configuration_lines(finding),
        f"- **programs**: `smallest.py` ({finding.smallest_size} characters), `first.py` (first hit), "
        f"`variants/` (the smallest of each trigger); every hit's provenance is in `finding.json`",
        f"- **hits**: {finding.hits}",
        *([f"- **known from**: `{finding.known_from}`, a synced instance that filed this signature first"]
          if finding.known_from else []),
        *([f"- **known**: filed before in `{finding.known.get('where', '')}` (same {finding.known.get('by', '')})"]
          if finding.known else []),
        *([f"- **split from**: `{finding.split_from}`: a variant of it that reduced to a different program"]
          if finding.split_from else []),
        *_apart_lines(finding),
        *(["- **split into**: " + ", ".join(f"`{d}`" for d in finding.split_into)
           + " (variants that reduced to another bug)"] if finding.split_into else []),
        f"- **torch**: {torch_version or 'unknown'}",
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


def _apart_lines(finding: Finding) -> list[str]:
    """Why a hit of a known signature was filed as a bug of its own."""
    lacks = finding.apart.get("lacks") if finding.apart else None
    if not isinstance(lacks, dict) or not lacks:
        return []
    told = "; ".join(f"`{where}` needs {', '.join(constructs)}" for where, constructs in lacks.items())
    return [f"- **unlike the known bugs of its signature**: its first hit lacks what each needs ({told}): "
            "a wrong result (or hang) names no place in Dynamo, so its program tells it apart"]


def _configuration_lines(finding: Finding) -> list[str]:
    """The Dynamo configurations the finding was hit under, and the one smallest.py needs."""
    under = finding.configurations or {finding.configuration: finding.hits}
    if set(under) == {DEFAULT} and finding.configuration == DEFAULT:
        return []
    known = CONFIGURATIONS.get(finding.configuration)
    hits = ", ".join(f"{name} ({n} hits)" for name, n in sorted(under.items(), key=lambda kv: -kv[1]))
    return [f"- **configuration**: smallest.py fails under `{finding.configuration}`"
            + (f", {known.describe()}: {known.why}" if known is not None and not known.is_default else "")
            + f"; hits under {hits}"]


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
        if (missed := missed_by_tests(result)) is not None:
            lines += [missed_sentence(missed.as_json()), ""]
    if result.compiled.stderr_tail.strip() and judgement.verdict in (Verdict.CRASH, Verdict.HANG):
        lines += ["## End of the compiled run's stderr", "", "```", result.compiled.stderr_tail.strip()[-3000:],
                  "```", ""]
    lines += ["## Smallest program", "", "```python", result.program.source.rstrip(), "```", ""]
    return "\n".join(lines)
