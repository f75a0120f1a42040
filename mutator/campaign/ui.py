"""What `mutate fuzz` shows while it runs: a live screen on a terminal, status lines otherwise.

Both read the fuzzer's snapshot dictionary (the same one stats.json stores).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.table import Table

from mutator.findings.finding import Finding
from mutator.core.verdict import Verdict


def hms(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m{seconds % 60:02d}s"


def by_severity(counts: dict[str, int]) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """Split counts by verdict name into frontend bugs and the rest (low severity, out of scope),
    each in the verdict's order (TAXONOMY.md: low-severity findings are kept apart from bugs)."""
    ordered = sorted(counts.items(), key=lambda item: Verdict[item[0]])
    bugs = [(k, n) for k, n in ordered if Verdict[k].is_frontend_bug]
    return bugs, [(k, n) for k, n in ordered if not Verdict[k].is_frontend_bug]


def status_line(s: dict[str, Any]) -> str:
    bugs, low = by_severity(s["findings_by_kind"])
    kinds = ", ".join(f"{k.lower()} {n}" for k, n in bugs) or "no bugs"
    if low:
        kinds += "; not frontend bugs: " + ", ".join(f"{k.lower()} {n}" for k, n in low)
    return (f"[{hms(s['elapsed'])}] execs {s['execs']} ({s['execs_per_sec']}/s)  corpus {s['corpus']} "
            f"(favoured {s['favoured']})  arcs {s['arcs']}"
            + (f" (traced in {s['traced_share']:.0%} of checks)" if s.get("traced_share", 1.0) < 1.0 else "")
            + f"  features {s['features']}  findings {s['findings']} [{kinds}] hits {s['hits']}"
            + (f"  known {s['known_signatures']} ({s['known_hits']} hits)" if s.get("known_hits") else "")
            + (f"  told apart {s['told_apart']}" if s.get("told_apart") else "")
            + (f"  to known bugs {s['known_share']:.0%}" if s.get("known_share") else "")
            + configurations_part(s)
            + f"  invalid {s['invalid_rate']:.0%}  "
            f"unstable {s['unstable_rate']:.0%}"
            + (f"  reduced {s['reduced']} (merged {s['merged']}, queued {s['reducing']})"
               if s.get("reduced") or s.get("reducing") else "")
            + (f"  confirmed on other torches {s['confirmed']} (waiting {s['confirming']})"
               if s.get("confirmed") or s.get("confirming") else "")
            + (f"  repaired {_repaired(s)}/{s['repair_tried']}" if s.get("repair_tried") else "")
            + (f"  llm {s['llm']['calls']} calls {s['llm']['prompt_tokens'] + s['llm']['completion_tokens']} tokens"
               if s.get("llm") else "")
            + (f"  synced {s['sync']['imported']} entries, {s.get('known_from_peers', 0)} findings known from peers"
               if s.get("sync") else ""))


def configurations_part(s: dict[str, Any]) -> str:
    """"  configs default 310/1, nested-graph-breaks 95/2 (sweep 40 left)": checks and new
    bugs per configuration, when there are several."""
    configurations = s.get("configurations") or {}
    if len(configurations) < 2:
        return ""
    parts = ", ".join(f"{name} {c.get('checks', 0)}/{c.get('new_bugs', 0)}" for name, c in configurations.items())
    waiting = f" (sweep {s['sweep_waiting']} left, {s.get('sweep_share', 0.0):.0%} of checks)" \
        if s.get("sweep_waiting") else ""
    return f"  configs (checks/new bugs) {parts}{waiting}"


def _repaired(s: dict[str, Any]) -> int:
    """Invalid mutants made valid again, by any repair."""
    return sum(c.get("valid", 0) for origin, c in s.get("origins", {}).items() if origin.startswith(("rule.", "llm")))


ORIGIN_NAMES = {"llm": "repaired by the LLM", "L": "LLM mutants (family L)",
                "generated": "from mutate generate's seeds"}


def origin_lines(s: dict[str, Any]) -> list[str]:
    """What came of repaired, LLM-made and generated programs, a line per origin."""
    lines = []
    if s.get("repair_tried"):
        lines.append(f"{s['repair_tried']} invalid mutants, {_repaired(s)} repaired into valid programs")
    for origin, c in s.get("origins", {}).items():
        name = ORIGIN_NAMES.get(origin, f"repaired by {origin}")
        asked = f"asked {c['asked']}, " if c.get("asked") else ""
        lines.append(f"{name}: {asked}made {c.get('made', 0)}, valid {c.get('valid', 0)}, kept {c.get('kept', 0)}, "
                     f"findings {c.get('findings', 0)}")
    llm = s.get("llm")
    if llm:
        failures = ", ".join(f"{k} {v}" for k, v in sorted(llm["failures"].items())) or "none"
        lines.append(f"LLM: {llm['calls']} calls, {llm['cache_hits']} from the cache, "
                     f"{llm['prompt_tokens'] + llm['completion_tokens']} tokens, failures: {failures}")
    return lines


def _size(finding: Finding) -> str:
    """"12 lines, repro.py  " once reduced."""
    reduction = finding.reduction
    if not reduction or not reduction.get("confirmed"):
        return ""
    repro = ", repro.py" if reduction.get("repro_reproduces") else ""
    return f"[{reduction['lines_after']} lines{repro}]  "


def finding_lines(findings: Iterable[Finding], root: Path) -> list[str]:
    """The end-of-campaign list: frontend bugs first, by verdict then hits; the rest after them."""
    ordered = sorted(findings, key=lambda f: (f.signature.verdict, -f.hits, f.directory))
    bugs = [f for f in ordered if f.signature.verdict.is_frontend_bug]
    rest = [f for f in ordered if not f.signature.verdict.is_frontend_bug]
    lines = []
    for title, group in ((f"frontend bugs: {len(bugs)} signatures", bugs),
                         (f"not frontend bugs (low severity, out of scope): {len(rest)} signatures", rest)):
        if group:
            lines.append(title)
            lines += [f"  {f.hits:5d} hits {len(f.variants):3d} triggers  {root / f.directory}  {_size(f)}"
                      f"{f.reason[:100]}" for f in group]
    return lines


class StatusLines:
    """One line every `every` seconds (for --no-ui and when stderr is not a terminal)."""

    def __init__(self, every: float = 5.0, stream: IO[str] | None = None) -> None:
        self.every = every
        self.stream = stream or sys.stderr
        self._last = 0.0

    def __enter__(self) -> StatusLines:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def __call__(self, snapshot: dict[str, Any]) -> None:
        if time.monotonic() - self._last >= self.every:
            self._last = time.monotonic()
            print(status_line(snapshot), file=self.stream, flush=True)


class LiveScreen:
    """AFL++'s status screen, for this domain."""

    def __init__(self, console: Console, title: str) -> None:
        self.title = title
        self._live = Live(console=console, refresh_per_second=4, transient=False)
        self._last = 0.0

    def __enter__(self) -> LiveScreen:
        self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.__exit__(None, None, None)

    def __call__(self, snapshot: dict[str, Any]) -> None:
        if time.monotonic() - self._last >= 0.25:
            self._last = time.monotonic()
            self._live.update(render(snapshot, self.title))


def render(s: dict[str, Any], title: str) -> Panel:
    top = Table.grid(padding=(0, 3))
    top.add_column()
    top.add_column()
    top.add_row(_pairs("timing", [
        ("run time", hms(s["elapsed"])),
        ("last new path", hms(s["last_new_path"])),
        ("execs", str(s["execs"])),
        ("execs/s", str(s["execs_per_sec"])),
    ]), _pairs("coverage", [
        ("corpus", f"{s['corpus']} ({s['favoured']} favoured)"),
        ("arcs (torch/_dynamo)", str(s["arcs"])),
        ("features", str(s["features"])),
        ("invalid / unstable", f"{s['invalid_rate']:.0%} / {s['unstable_rate']:.0%}"),
    ]))
    findings = Table(title="findings (distinct signatures)", title_justify="left", expand=True, show_edge=False)
    findings.add_column("kind")
    findings.add_column("signatures", justify="right")
    bugs, low = by_severity(s["findings_by_kind"])
    for kind, n in bugs:
        findings.add_row(kind, str(n))
    for kind, n in low:
        findings.add_row(f"[dim]{kind} (not a frontend bug)[/dim]", f"[dim]{n}[/dim]")
    findings.caption = (f"hits {s['hits']}; "
                        + (f"known from --known: {s['known_signatures']} signatures, {s['known_hits']} hits; "
                           if s.get("known_hits") else "")
                        + (f"{s['told_apart']} hits of known signatures told apart (filed: their programs lack "
                           "what the known bugs need); " if s.get("told_apart") else "")
                        + (f"{s['known_share']:.0%} of the checks hit bugs known already; "
                           if s.get("known_share") else "")
                        + f"reduced {s.get('reduced', 0)}, merged {s.get('merged', 0)}, "
                        f"queued for reduction {s.get('reducing', 0)}"
                        + (f", confirmed on other torches {s['confirmed']} (waiting {s['confirming']})"
                           if "confirmed" in s else "") + f"; latest: {s['latest_finding'] or 'none'}")
    families = Table(title="operator yield by family", title_justify="left", expand=True, show_edge=False)
    for column in ("family", "applied", "valid", "new cov", "new bugs"):
        families.add_column(column, justify="right" if column != "family" else "left")
    for family, c in s["families"].items():
        applied = c.get("applied", 0)
        families.add_row(family, str(applied), f"{c.get('valid', 0) / applied:.0%}" if applied else "-",
                         str(c.get("new", 0)), str(c.get("findings", 0)))
    tables = [findings, families]
    configurations = s.get("configurations") or {}
    if len(configurations) > 1:
        table = Table(title="Dynamo configurations", title_justify="left", expand=True, show_edge=False)
        for column in ("configuration", "checks", "swept", "invalid", "kept", "new bugs", "known hits"):
            table.add_column(column, justify="right" if column != "configuration" else "left")
        for name, c in configurations.items():
            table.add_row(name, str(c.get("checks", 0)), str(c.get("swept", 0)), str(c.get("invalid", 0)),
                          str(c.get("kept", 0)), str(c.get("new_bugs", 0)), str(c.get("known", 0)))
        if s.get("sweep_waiting"):
            table.caption = (f"{s['sweep_waiting']} queue entries wait to be checked under other configurations; "
                             f"the sweep takes {s.get('sweep_share', 0.0):.0%} of the checks")
        tables.append(table)
    extra = "\n".join(origin_lines(s))
    sync = s.get("sync")
    if sync:
        extra = "\n".join(filter(None, [extra, f"sync: {sync['imported']} entries taken from peers in "
                                               f"{sync['rounds']} rounds; {s.get('known_from_peers', 0)} findings "
                                               "known from peers"]))
    return Panel(Group(top, *tables, *([extra] if extra else []),
                       f"workers: {workers_line(s['workers'])}   lost runs: {s['lost']}"),
                 title=title, subtitle="Ctrl-C stops cleanly")


def workers_line(states: list[str]) -> str:
    """One word per worker for a few; counts by state for many (a cluster's thousand)."""
    if len(states) <= 16:
        return " ".join(states) or "-"
    return f"{len(states)}: " + ", ".join(f"{n} {state}" for state, n in Counter(states).most_common())


def _pairs(title: str, rows: list[tuple[str, str]]) -> Table:
    table = Table(title=title, title_justify="left", show_header=False, show_edge=False, box=None)
    table.add_column(style="dim")
    table.add_column()
    for key, value in rows:
        table.add_row(key, value)
    return table
