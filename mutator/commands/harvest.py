"""`mutate harvest`: programs from the test files and reproducer scripts a user has."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from mutator.judge.check import Checker
from mutator.commands.common import (EXIT_USAGE, coverage_option, python_option, run_config, run_options,
                                     summary_json_option)
from mutator.commands.progress import progress
from mutator.exec.pool import PoolError, WorkerPool
from mutator.findings.store import FindingStore


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Where the programs go (and findings/ for tests that already fail); may exist.")
@coverage_option("tell duplicates apart")
@click.option("--no-import", is_flag=True,
              help="Read which tests a test file has from its text only, without importing it in a worker "
                   "(tests its import makes, such as members copied from mixins, are then missed).")
@python_option
@run_options
@summary_json_option
def harvest(paths: tuple[str, ...], out: Path, coverage_include: tuple[str, ...], no_import: bool, python: str | None,
            backend: str, timeout: float, memory_mb: int, jobs: int | None, no_sandbox: bool, as_json: bool) -> None:
    """Programs from test files and reproducer scripts: one per test that compiles something.

    Which tests a test file has is what importing it in a sandboxed worker shows, as pytest
    collects them; a file that cannot be imported gets a `warning:` line and its tests are
    read from its text. Every candidate is checked through the pool: valid ones are written
    to --out with a provenance header, duplicates (same coverage) dropped, failing ones filed
    in --out/findings/ (a test whose own checks pass over a divergence is listed apart, in
    `divergences_the_test_misses`). One file or test that cannot be processed never stops
    the run: each gets one `error:` line on stderr and a place in the summary (`errors`,
    `failures` in --json). Exit status: 0 when every file and test was processed (tests
    that compile nothing, are skipped, invalid, duplicates or already failing included); 2
    when a file could not be read, parsed or taken apart, or a test could not be extracted,
    made a program, checked or written.
    """
    from mutator.harvest.collection import Collector
    from mutator.harvest.harvester import Harvester

    config = run_config(backend=backend, timeout=timeout, memory_mb=memory_mb, no_sandbox=no_sandbox)
    try:
        with WorkerPool(workers=jobs, config=config, coverage=coverage_include, python=python or sys.executable) as pool:
            pool.wait_ready()
            torch_version = pool.build.describe()
            collect = None if no_import else Collector(pool.submit, config).collect
            harvester = Harvester(Checker(pool).check, FindingStore(out, torch_version=torch_version,
                                                                    backend=backend),
                                  out, torch_version=torch_version, workers=pool.size, collect=collect)
            report = _harvest_with_progress(harvester, paths, show=not as_json)
    except PoolError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    for failed in report.collection_errors:
        click.echo(f"warning: {failed['file']}: cannot be imported ({failed['error']}); its tests were read from "
                   "its text", err=True)
    for error in report.errors:
        click.echo(f"error: {error}", err=True)
    for failure in report.failures:
        click.echo(f"error: {failure['origin']}: {failure['reason']}", err=True)
    if as_json:
        click.echo(json.dumps(report.as_json(), indent=2))
    else:
        _print_harvest(Console(width=None if sys.stdout.isatty() else 200), report, out)
    if not report.ok:
        sys.exit(EXIT_USAGE)


def _harvest_with_progress(harvester, paths, *, show: bool):  # type: ignore[no-untyped-def]
    from mutator.harvest.harvester import HarvestReport

    report = HarvestReport()
    candidates = harvester.candidates(paths, report)
    with progress(len(candidates), "validating", enabled=show) as bar:
        harvester.validate(candidates, report, progress=bar.advance)
    return report


def _print_harvest(console: Console, report, out: Path) -> None:  # type: ignore[no-untyped-def]
    table = Table(show_header=False)
    table.add_column("what")
    table.add_column("count", justify="right")
    rows = [("files read", report.files), ("test files", report.test_files), ("reproducer scripts", report.scripts),
            ("tests found", report.tests_found), ("candidate programs", report.candidates),
            ("not programs (helpers)", len(report.not_programs)),
            ("programs written", len(report.written)), ("skipped when run", report.skipped),
            ("duplicates (same coverage)", report.duplicates), ("unstable", report.unstable),
            ("already failing (filed)", len(report.already_failing)),
            ("divergences the test misses (filed)", len(report.divergences_the_test_misses)),
            ("test files collected by importing them", report.imported),
            ("test files that cannot be imported (read from their text)", len(report.collection_errors))]
    rows += [("modules that skip themselves", len(report.skipped_modules))] if report.skipped_modules else []
    rows += [(f"not harvested: {why}", n) for why, n in sorted(report.not_harvested.items())]
    rows += [(f"invalid: {why}", n) for why, n in sorted(report.invalid.items())]
    rows += [("files not processed (errors)", len(report.errors))] if report.errors else []
    rows += [(f"failed: {why}", n) for why, n in sorted(report.failed.items())]
    for what, n in rows:
        table.add_row(what, str(n))
    console.print(table)
    for failing in report.already_failing:
        console.print(f"  [bold red]{failing['verdict']}[/] {failing['origin']}: {failing['reason'][:160]}")
    for missed in report.divergences_the_test_misses:
        console.print(f"  [bold red]{missed['verdict']}[/] {missed['origin']}: its checks pass; the "
                      f"{missed['comparison']} differs: {missed['detail'][:160]}")
    console.print(f"programs in {out}/, findings in {out}/findings/")
