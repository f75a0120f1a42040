"""`mutate run`: judge programs once each and print a verdict table (or JSON)."""

from __future__ import annotations

import json
import sys
from concurrent.futures import as_completed

import click
from rich.console import Console
from rich.table import Table

from mutator.judge.check import Checker, CheckResult, CheckTask
from mutator.judge.as_json import check_to_json
from mutator.commands.common import (EXIT_FINDINGS, EXIT_USAGE, config_option, offered_configurations, open_executor,
                                     python_option, ray_option, run_config, run_options)
from mutator.core.build import Build
from mutator.commands.progress import progress
from mutator.exec import ExecutorError
from mutator.core.program import load_programs
from mutator.core.verdict import Verdict

_STYLES = {  # a verdict's colour in the table: bugs in red, the low-severity kinds in magenta
    Verdict.PASS: "green",
    Verdict.INVALID: "dim",
    Verdict.UNSTABLE: "yellow",
    Verdict.FULLGRAPH_BREAK: "magenta",
    Verdict.SPECIALIZATION: "magenta",
    Verdict.BACKEND_FAILURE: "magenta",
}


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@ray_option
@python_option
@run_options
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array instead of a table.")
def run(paths: tuple[str, ...], ray_address: str | None, python: str | None, backend: str, timeout: float,
        memory_mb: int, jobs: int | None, no_sandbox: bool, configuration: str, as_json: bool) -> None:
    """Judge each program (files or directories): does torch.compile get it right?

    Exit status: 0 when no program has a bug verdict, 1 when at least one has, 2 for
    usage errors (including files that are not programs).
    """
    console = Console(stderr=True)
    programs, errors = load_programs(list(paths))
    for error in errors:
        click.echo(f"error: {error}", err=True)  # one line each, whatever the terminal width
    if not programs:
        click.echo("error: no programs to run", err=True)
        sys.exit(EXIT_USAGE)
    config = run_config(backend=backend, timeout=timeout, memory_mb=memory_mb, no_sandbox=no_sandbox,
                        configuration=configuration)
    try:
        with open_executor(jobs=jobs, config=config, ray_address=ray_address, python=python) as executor:
            executor.wait_ready()
            offered_configurations(executor, (configuration,), strict=True)
            results = _check_all(Checker(executor), programs, show_progress=not as_json)
            layer, build = executor.sandbox(), executor.build
            notes = sorted({note for ready in executor.ready for note in ready.notes})
    except ExecutorError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        console.print("interrupted")
        sys.exit(130)
    for note in notes:  # a hook of the runtime this torch lacks: what the verdicts cannot rest on
        click.echo(f"note: this torch has no {note}", err=True)
    if as_json:
        sides = dict(sandbox=layer, torch=build.as_json(), driver=Build.driver().as_json())
        click.echo(json.dumps([{**check_to_json(r), **sides} for r in results], indent=2))
    else:
        _print_table(Console(width=None if sys.stdout.isatty() else 200), results)
        console.print(f"sandbox: {layer}; {build.describe()}"
                      + (f"; configuration {configuration}" if configuration != "default" else ""))
    if any(r.verdict.is_finding for r in results):
        sys.exit(EXIT_FINDINGS)
    if errors:
        sys.exit(EXIT_USAGE)


def _check_all(checker: Checker, programs: list, *, show_progress: bool) -> list[CheckResult]:
    """Every program's check at once (the executor's queue holds them; no thread waits per check)."""
    results: dict[int, CheckResult] = {}
    with progress(len(programs), "checking", enabled=show_progress) as bar:
        futures = {checker.submit(CheckTask(p)): i for i, p in enumerate(programs)}
        for future in as_completed(futures):
            reply = future.result()
            assert reply.result is not None
            results[futures[future]] = reply.result
            bar.advance()
    return [results[i] for i in range(len(programs))]


def _print_table(console: Console, results: list[CheckResult]) -> None:
    table = Table(show_lines=False)
    table.add_column("program", overflow="fold")
    table.add_column("verdict")
    table.add_column("reason", overflow="fold", ratio=1)
    table.add_column("time", justify="right")
    for r in results:
        table.add_row(r.program.name, f"[{_STYLES.get(r.verdict, 'bold red')}]{r.verdict.name}[/]",
                      r.reason, f"{r.seconds:.2f}s")
    console.print(table)
    counts: dict[str, int] = {}
    for r in results:
        counts[r.verdict.name] = counts.get(r.verdict.name, 0) + 1
    console.print(", ".join(f"{n} {name}" for name, n in counts.items()))
