"""What `mutate fuzz` shows while it runs: a live screen on a terminal, status lines otherwise.

Both read the fuzzer's snapshot dictionary (the same one stats.json stores).
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.table import Table


def hms(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m{seconds % 60:02d}s"


def status_line(s: dict[str, Any]) -> str:
    kinds = ", ".join(f"{k.lower()} {n}" for k, n in sorted(s["findings_by_kind"].items())) or "none"
    return (f"[{hms(s['elapsed'])}] execs {s['execs']} ({s['execs_per_sec']}/s)  corpus {s['corpus']} "
            f"(favoured {s['favoured']})  arcs {s['arcs']}  features {s['features']}  "
            f"findings {s['findings']} [{kinds}] hits {s['hits']}  invalid {s['invalid_rate']:.0%}  "
            f"unstable {s['unstable_rate']:.0%}")


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
    for kind, n in sorted(s["findings_by_kind"].items()):
        findings.add_row(kind, str(n))
    findings.caption = f"hits {s['hits']}; latest: {s['latest_finding'] or 'none'}"
    families = Table(title="operator yield by family", title_justify="left", expand=True, show_edge=False)
    for column in ("family", "applied", "valid", "new cov", "findings"):
        families.add_column(column, justify="right" if column != "family" else "left")
    for family, c in s["families"].items():
        applied = c.get("applied", 0)
        families.add_row(family, str(applied), f"{c.get('valid', 0) / applied:.0%}" if applied else "-",
                         str(c.get("new", 0)), str(c.get("findings", 0)))
    workers = " ".join(s["workers"]) or "-"
    return Panel(Group(top, findings, families, f"workers: {workers}   lost runs: {s['lost']}"),
                 title=title, subtitle="Ctrl-C stops cleanly")


def _pairs(title: str, rows: list[tuple[str, str]]) -> Table:
    table = Table(title=title, title_justify="left", show_header=False, show_edge=False, box=None)
    table.add_column(style="dim")
    table.add_column()
    for key, value in rows:
        table.add_row(key, value)
    return table
