"""`mutate versions`: judge findings on several torches (one interpreter each) and record in
each `finding.json` on which it fails; `mutate report --versions` does the same before
writing report.md. The judging is `mutator.report.version_judge`; this module starts one
pool per interpreter, finds the finding directories and prints the table."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from mutator.commands.common import EXIT_USAGE, absolute_interpreters, run_config, run_options
from mutator.commands.progress import progress
from mutator.core.observation import RunConfig
from mutator.exec import ExecutorError
from mutator.exec.pool import WorkerPool
from mutator.findings.finding import Finding
from mutator.findings.store import FindingStore
from mutator.report.version_judge import Torch, VersionJudge
from mutator.report.versions import PROGRAMS, OnTorch, Versions

_STYLES = {"live_on_newest": "bold red", "fixed_since": "green", "regression": "bold magenta", "changed": "yellow"}


def pythons_option(name: str, help_text: str):  # type: ignore[no-untyped-def]
    """A repeatable interpreter option (`--python` here, `--versions` on `mutate report`)."""
    return click.option(name, "pythons", multiple=True, type=click.Path(dir_okay=False), metavar="PATH",
                        callback=absolute_interpreters, help=help_text)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@pythons_option("--python", "A Python interpreter whose torch to judge on (repeatable: one per torch and "
                            "Python, e.g. .venv/bin/python, .venv-py3.13/bin/python and "
                            ".venv-torch2.13.0/bin/python); it needs this package's dependencies. Default: this "
                            "command's own interpreter.")
@run_options
def versions(paths: tuple[Path, ...], pythons: tuple[str, ...], backend: str, timeout: float, memory_mb: int,
             jobs: int | None, no_sandbox: bool) -> None:
    """On which torch and Python a finding fails: judge each finding's reduced program, its
    smallest one and its repro.py on every interpreter given, and record it in finding.json
    (`versions`).

    PATHS are finding directories or campaign directories (all their findings). Each finding
    gets one status from the newest torch: live_on_newest, fixed_since, regression or
    changed, with the Pythons it is live on there when several were given; `mutate report`
    puts the table into report.md. Not while a campaign writes the same finding.json."""
    targets = finding_dirs(paths)
    config = run_config(backend=backend, timeout=timeout, memory_mb=memory_mb, no_sandbox=no_sandbox)
    try:
        with open_torches(pythons or (sys.executable,), jobs=jobs, config=config) as torches:
            judge = VersionJudge(torches)
            rows = []
            with progress(len(targets), "judging", enabled=True) as bar:
                for store, finding in targets:
                    record = judge.judge(store.root / finding.directory, finding)
                    finding.versions = record.as_json()
                    store.save(finding)
                    rows.append((store.root / finding.directory, record))
                    bar.advance()
    except ExecutorError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        click.echo("interrupted: the findings judged so far are recorded", err=True)
        sys.exit(130)
    print_table(rows)
    click.echo("recorded in each finding.json (versions); `mutate report CAMPAIGN` puts them into report.md")


def finding_dirs(paths: tuple[Path, ...]) -> list[tuple[FindingStore, Finding]]:
    """Every finding the paths name, with the store that owns it; a path that is neither a
    finding nor a campaign directory ends the command with a one-line error."""
    targets: list[tuple[FindingStore, Finding]] = []
    stores: dict[Path, FindingStore] = {}
    for path in paths:
        if (path / "finding.json").is_file():
            root = path.resolve().parent.parent
            store = stores.setdefault(root, FindingStore(root))
            finding = store.at(path)
            if finding is None:
                click.echo(f"error: {path}: its finding.json is unreadable or was merged into another finding; "
                           "see the warnings of `mutate report` on its campaign", err=True)
                sys.exit(EXIT_USAGE)
            targets.append((store, finding))
        elif (path / "findings").is_dir() or (path / "hangs").is_dir():
            store = stores.setdefault(path.resolve(), FindingStore(path.resolve()))
            for problem in store.unreadable:
                click.echo(f"warning: {problem}", err=True)
            targets += [(store, finding) for finding in store.findings.values()]
        else:
            click.echo(f"error: {path}: neither a finding directory (finding.json) nor a campaign directory "
                       "(findings/); give one of those", err=True)
            sys.exit(EXIT_USAGE)
    return targets


@contextlib.contextmanager
def open_torches(pythons: tuple[str, ...], *, jobs: int | None, config: RunConfig) -> Iterator[list[Torch]]:
    """One ready pool per interpreter (started side by side), as the torches a VersionJudge
    judges on; `jobs` workers each (default: the cores shared among them)."""
    distinct = list(dict.fromkeys(pythons))
    workers = jobs or max(1, (os.cpu_count() or 1) // len(distinct))
    with contextlib.ExitStack() as stack:
        pools = [stack.enter_context(WorkerPool(workers=workers, config=config, python=python))
                 for python in distinct]
        for pool in pools:
            pool.wait_ready()
        yield [Torch(python, pool, pool.build) for python, pool in zip(distinct, pools)]


def print_table(rows: list[tuple[Path, Versions]]) -> None:
    """A finding a row: its status and, per torch and Python (oldest first), each program's
    verdict and the reproducer's exit."""
    builds = {(t.build.torch, t.python): None for _, record in rows for t in record.torches}
    names = {key: f"{key[0]} py{key[1]}" if key[1] else key[0] for key in builds}
    table = Table(title=f"{len(rows)} findings on {', '.join(names.values()) or 'no torch'}",
                  caption="r: reduced.py, s: smallest.py, =: with the finding's signature, repro: repro.py's exit")
    table.add_column("finding", overflow="fold")
    table.add_column("status")
    for key in builds:
        table.add_column(names[key], overflow="fold")
    table.add_column("why", overflow="fold", ratio=1)
    for directory, record in rows:
        cells = {(t.build.torch, t.python): _cell(t) for t in record.torches}
        table.add_row(str(directory), f"[{_STYLES[record.status]}]{record.status}[/]",
                      *(cells.get(key, "-") for key in builds), record.line)
    Console(width=None if sys.stdout.isatty() else 200).print(table)


def _cell(torch: OnTorch) -> str:
    """"MISMATCH= / MISMATCH= / exit 1": reduced, smallest, repro; `=` the finding's signature."""
    parts = []
    for name in PROGRAMS:
        verdict = torch.program(name)
        if verdict is not None:
            parts.append(f"{name[0]}:{verdict.verdict or '?'}{'=' if verdict.same else ''}")
    if torch.repro:
        parts.append(f"repro {torch.repro_exit if torch.repro_exit is not None else '?'}")
    return " ".join(parts)
