"""What `mutate report` writes: one issue-ready `report.md` per finding, in the shape of
PyTorch's pt2 bug template, and the row of its summary table.

A title in PyTorch's style, what differs in one paragraph, the reproducer, the output it
printed on this machine (observed) next to what eager gives (expected), the ablation,
the versions that matter, how the fuzzer found it, and the labels to suggest. Everything
comes from the finding's record; nothing is made up when a part is missing (an
unreduced finding says how to reduce it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from mutator.core.configurations import CONFIGURATIONS, DEFAULT
from mutator.core.verdict import Verdict
from mutator.findings.finding import SWEEP_PREFIX, Finding
from mutator.findings.known import Match
from mutator.findings.readme import ablation_table
from mutator.findings.root_cause import Group
from mutator.findings.signature import SEVERITY
from mutator.judge.missed import missed_sentence
from mutator.mutation.operator import family_of
from mutator.report import matters
from mutator.report import versions as versions_record

LABELS = ("oncall: pt2", "module: dynamo", "topic: fuzzer")
_VERSIONS_SCRIPT = r"""
import json, platform, sys
import torch
cpu = ""
try:
    with open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
except OSError:
    pass
print(json.dumps({
    "torch": torch.__version__, "git": getattr(torch.version, "git_version", ""), "debug": torch.version.debug,
    "cuda": torch.version.cuda, "python": sys.version.split()[0], "os": platform.platform(),
    "cpu": cpu or platform.processor(), "libc": " ".join(platform.libc_ver()),
}))
"""


def collect_versions(python: str = sys.executable) -> dict[str, Any]:
    """What PyTorch's collect_env reports that matters for a frontend bug, from a fresh
    interpreter (this process never imports torch)."""
    try:
        proc = subprocess.run([python, "-c", _VERSIONS_SCRIPT], capture_output=True, text=True, timeout=120)
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError, OSError):
        return {"torch": "unknown"}


def difference(finding: Finding) -> str:
    """What differs, in the reproducer's own words when it has one (its AssertionError is
    about the reduced program; the finding's reason is about the first, larger one)."""
    if finding.signature.verdict is not Verdict.MISMATCH:  # a crash's own message says it better
        return finding.reason
    output = finding.reduction.get("repro_output", "") if finding.reduction.get("repro_reproduces") else ""
    lines = [line for line in output.splitlines() if line.startswith("AssertionError: ")]
    return lines[-1].removeprefix("AssertionError: ").strip() if lines else finding.reason


def title(finding: Finding) -> str:
    """What differed and, once "what matters" has run, what in the program it needs: "with
    a `set` subclass and a graph break"; after `mutate versions`, marked when it is not live
    on the newest torch judged ("[fixed since torch 2.14.1] ...")."""
    judged = versions_record.recorded(finding)
    return (judged.marker() if judged else "") + _title(finding)


def _title(finding: Finding) -> str:
    signature = finding.signature
    reason = difference(finding)
    needs = matters.headline(finding.reduction.get("matters", {}),
                             said="fullgraph" if signature.verdict is Verdict.FULLGRAPH_BREAK else "")
    with_ = f" with {needs}" if needs else ""
    if signature.verdict is Verdict.MISMATCH:
        return f"[dynamo] torch.compile(backend=\"eager\") differs from eager{with_}: {reason[:100]}"
    if signature.verdict is Verdict.CRASH:
        where = f" in {signature.location}" if signature.location else ""
        message = reason.split("raised", 1)[-1].strip() if "raised" in reason else reason
        return f"[dynamo] {signature.exception or 'crash'}{where} under torch.compile{with_}: {message[:90]}"
    if signature.verdict is Verdict.FULLGRAPH_BREAK:
        return f"[dynamo] graph break under fullgraph=True{with_}: {signature.location or signature.exception}"
    return f"[dynamo] {signature.kind.lower().replace('_', ' ')}{with_}: {reason[:100]}"


def found_by(finding: Finding) -> str:
    first = finding.history[0] if finding.history else {}
    provenance = first.get("provenance", "")
    if provenance.startswith("seed:"):
        return f"the seed program `{provenance.removeprefix('seed:')}` itself"
    if provenance.startswith(SWEEP_PREFIX):
        configuration, _, entry = provenance.removeprefix(SWEEP_PREFIX).partition(":")
        return (f"checking a program of its queue (entry {entry}, which passed under the configuration it was "
                f"checked under first) under the configuration `{configuration}`, {finding.hits} programs hit it")
    steps = [step for step in provenance.split("+") if step]
    families = sorted({family_of(step) for step in steps})
    return (f"mutating a seed with {', '.join(f'`{s}`' for s in steps) or 'unknown operators'} "
            f"(taxonomy classes {', '.join(families)}), {finding.hits} programs hit it")


def taxonomy(finding: Finding) -> str:
    """The taxonomy classes of the mutations that triggered it (TAXONOMY.md), or "seed"."""
    families = sorted({part for key in finding.variants if not key.startswith("seed ") for part in key.split("+")})
    return ", ".join(families) or "seed"


def report_markdown(finding: Finding, *, repro_source: str | None, versions: dict[str, Any],
                    related: Sequence[str] = ()) -> str:
    """`related`: lines on other findings of the same root cause, or the filed bug this one is."""
    reduction = finding.reduction
    lines = [f"# {title(finding)}", "", "### 🐛 Describe the bug", ""]
    lines += [_description(finding), ""]
    lines += configuration_lines(finding)
    if finding.missed_by_tests:
        lines += [missed_sentence(finding.missed_by_tests), ""]
    if repro_source is not None:
        lines += ["Reproducer (needs only torch; exits 1 while the bug is present, 0 once it is fixed):", "",
                  "```python", repro_source.rstrip(), "```", ""]
    elif reduction.get("source"):
        lines += ["Reduced program (mutator's harness form: `fn` is compiled and called with `inputs()`; "
                  f"a standalone repro.py could not be verified: {reduction.get('repro', '')}):", "",
                  "```python", reduction["source"].rstrip(), "```", ""]
    else:
        lines += ["Not reduced yet: run `mutate reduce` on the finding directory. The smallest program so far is "
                  "`smallest.py` in the finding directory.", ""]
    output = reduction.get("repro_output", "")
    if output:
        lines += ["Observed (the reproducer's output on this machine):", "", "```", output.strip()[-2500:], "```", ""]
    lines += [f"Expected: {_expected(finding.signature.verdict)}", ""]
    lines += matters.markdown(reduction.get("matters", {}))
    if reduction.get("ablation"):
        label = "; ".join(filter(None, [reduction.get("label", ""), reduction.get("configurations_label", "")]))
        lines += [f"Ablation (**{label}**):", "", ablation_table(reduction["ablation"]), ""]
    lines += ["### Versions", "", "```"]
    lines += [f"{key}: {value}" for key, value in versions.items()]
    lines += ["```", ""]
    judged = versions_record.recorded(finding)
    if judged is not None:
        lines += versions_record.markdown(judged)
    lines += ["### How it was found", "",
              f"By mutator, a mutation-based, coverage-guided fuzzer of TorchDynamo, {found_by(finding)}. "
              f"Signature: `{finding.signature.describe()}`; severity: "
              f"{SEVERITY.get(finding.signature.verdict, 'a frontend bug')}.", ""]
    if finding.merged:
        lines += [f"Also seen as {len(finding.merged)} other signatures that reduced to the same program: "
                  + "; ".join(f"`{m['signature']['kind']} {m['signature'].get('exception', '')}`" for m in finding.merged),
                  ""]
    lines += [*related, *([""] if related else [])]
    lines += ["Suggested labels: " + ", ".join(f"`{label}`" for label in LABELS), ""]
    return "\n".join(lines)


def configuration_lines(finding: Finding) -> list[str]:
    """What report.md says of the Dynamo configuration: the one the reproducer sets, and why
    (off by default; whether users run it), or that the bug shows under the defaults too."""
    reduction = finding.reduction
    needed = reduction.get("configuration", finding.configuration)
    if needed != DEFAULT and needed in CONFIGURATIONS:
        configuration = CONFIGURATIONS[needed]
        settings = ", ".join(f"`{name} = {value}`" for name, value in configuration.settings)
        only = " only" if reduction.get("needs_configuration") else ""
        passes = "; under Dynamo's defaults the program passes." if reduction.get("needs_configuration") else "."
        return [f"It fails{only} with {settings}: {configuration.why}. The reproducer sets it{passes}", ""]
    found = reduction.get("found_under", finding.configuration)
    if found != DEFAULT:
        return [f"Found under the configuration `{found}`; the reduced program fails under Dynamo's defaults too.", ""]
    return []


def _description(finding: Finding) -> str:
    signature = finding.signature
    reason = difference(finding)
    if signature.verdict is Verdict.MISMATCH:
        return (f"Running this program with `torch.compile(backend=\"eager\")` gives a different result than running "
                f"it eagerly: {reason}. With `backend=\"eager\"` no graph compiler is involved, so the difference "
                "comes from Dynamo's tracing.")
    if signature.verdict is Verdict.CRASH:
        return (f"This program runs eagerly, but under `torch.compile(backend=\"eager\")` {reason.removeprefix('the ')}.")
    if signature.verdict is Verdict.SPECIALIZATION:
        return (f"Dynamo recompiles this program's code until it reaches its recompile limit, on calls whose states "
                f"never repeat: {reason}. Specialisation is documented behaviour; what is reported is that these "
                "calls reach the limit (`torch._dynamo.config.recompile_limit`).")
    if signature.verdict is Verdict.RECOMPILE_STORM:
        return (f"Dynamo compiles again on a call whose inputs and state repeat an earlier call's exactly: {reason}. "
                "Guards that held for the earlier call should hold again.")
    if signature.verdict is Verdict.HANG:
        return f"The program finishes eagerly, but under `torch.compile(backend=\"eager\")` it does not: {reason}."
    if signature.verdict is Verdict.FULLGRAPH_BREAK:
        return (f"Under `fullgraph=True` Dynamo refuses this program with a graph break: {reason}. A low-severity "
                "finding: Dynamo says what it does not support.")
    return f"{signature.kind}: {reason}."


_EXPECTED = {
    Verdict.SPECIALIZATION: "Dynamo compiles these calls without reaching `recompile_limit` (the reproducer exits 0).",
    Verdict.RECOMPILE_STORM: "a call whose inputs and state repeat an earlier call's compiles nothing (the reproducer "
                             "exits 0).",
    Verdict.HANG: "the compiled run finishes within the reproducer's time limit (10x eager's time plus 30 s).",
    Verdict.FULLGRAPH_BREAK: "the program compiles to one graph, or Dynamo's message says why it cannot.",
}


def _expected(verdict: Verdict) -> str:
    return _EXPECTED.get(verdict, "the compiled program behaves as eager does (with the lines above, `compiled:` "
                                  "equal to `eager:`, and no exception that eager does not raise).")


def summary_row(finding: Finding) -> dict[str, Any]:
    """One finding for the table and --json: stable field names."""
    reduction = finding.reduction
    judged = versions_record.recorded(finding)
    return dict(directory=finding.directory, kind=finding.signature.kind, signature=finding.signature.describe(),
                summary=finding.reason[:200], hits=finding.hits, title=title(finding),
                reduced_lines=reduction.get("lines_after") if reduction.get("confirmed") else None,
                repro=bool(reduction.get("repro_reproduces")), ablation=reduction.get("label", ""),
                taxonomy=taxonomy(finding), merged=len(finding.merged),
                configuration=finding.reduction.get("configuration", finding.configuration),
                frontend_bug=finding.signature.verdict.is_frontend_bug,
                versions=judged.status if judged else "", versions_line=judged.line if judged else "")


def known_lines(match: Match | dict[str, str] | None) -> list[str]:
    """report.md's line saying the bug was filed before, when it was."""
    if not match:
        return []
    where, by = (match.where, match.by) if isinstance(match, Match) else (match.get("where", ""), match.get("by", ""))
    return [f"Known: filed before in `{where}` (same {by}); not new.", ""]


def root_cause_lines(group: Group | None, key: str) -> list[str]:
    """report.md's "Same root cause as" line for the finding reported from `key`."""
    if group is None:
        return []
    others = "; ".join(f"`{m.key}` ({m.finding.signature.describe()})" for m in group.others(key))
    return [f"Same root cause as: {others} (group {group.name}: the reduced programs differ only where they fail; "
            "kept as separate findings).", ""]
