"""`mutate report`: a campaign's distinct findings as a table and one report.md each; over
several campaign directories (the instances of a synced campaign), each signature once.
What is written is `mutator.report`'s; this module reads the options, runs the ablation a
reduced finding lacks, and prints the table."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from mutator.commands.common import EXIT_USAGE, python_option, run_config, run_options
from mutator.commands.versions import open_torches, pythons_option
from mutator.core.observation import RunConfig
from mutator.core.program import Program
from mutator.exec import ExecutorError
from mutator.exec.pool import PoolError, WorkerPool
from mutator.findings import known as known_bugs
from mutator.reduce import ablation
from mutator.report.campaigns import Campaigns, known_hit_lines, write_reports
from mutator.report.issue import collect_versions
from mutator.report.version_judge import VersionJudge


@click.command()
@click.argument("campaign_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also copy every report.md here, one file per finding.")
@click.option("--no-ablation", is_flag=True, help="Do not run the ablation for reduced findings that lack one.")
@click.option("--known", "known_paths", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="Bugs filed before (repeatable): a campaign directory, a findings folder, a finding directory or "
                   "a folder of reproducer .py files. Findings with their signature or reduced program are listed "
                   "as known, after the new ones.")
@python_option
@pythons_option("--versions", "Also judge every finding on the torch of this interpreter (repeatable: one per "
                              "torch) first, as `mutate versions` does; report.md gets its Versions table.")
@run_options
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON (stable field names).")
def report(campaign_dirs: tuple[Path, ...], out: Path | None, no_ablation: bool, known_paths: tuple[Path, ...],
           python: str | None, pythons: tuple[str, ...], backend: str, timeout: float, memory_mb: int,
           jobs: int | None, no_sandbox: bool, as_json: bool) -> None:
    """Issue-ready reports of a campaign's distinct findings: a table, and report.md per finding.

    Given several campaign directories (the instances of a synced campaign), each
    signature is one finding: reported from the directory with the best of it (reduced,
    then found first), with the hits of all, and `also_in` listing the others.

    Findings whose reduced programs differ only where they fail (a crash on a value and a
    mismatch of it) are one root cause: shown together as a group (R1, R2, ...), kept as
    separate findings. With --known, findings filed before are marked and listed last. With
    --versions, findings fixed on the newest torch given are listed after the bugs to file."""
    for campaign_dir in campaign_dirs:
        if not (campaign_dir / "findings").is_dir():
            click.echo(f"error: {campaign_dir}: no findings/ directory; give a campaign directory", err=True)
            sys.exit(EXIT_USAGE)
    try:
        known = known_bugs.KnownBugs.load(list(known_paths))
    except known_bugs.KnownError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    for problem in known.problems:
        click.echo(f"warning: {problem}", err=True)
    campaigns = Campaigns(campaign_dirs)
    for problem in campaigns.problems:
        click.echo(f"warning: {problem}", err=True)
    missing = [r for r in campaigns.distinct() if r.finding.reduction.get("confirmed")
               and not r.finding.reduction.get("ablation")]
    if missing and not no_ablation:
        config = run_config(backend=backend, timeout=timeout, memory_mb=memory_mb, no_sandbox=no_sandbox)
        try:
            with WorkerPool(workers=jobs, config=config, python=python or campaigns.python()) as pool:
                pool.wait_ready()
                for reported in missing:
                    click.echo(f"ablation: {reported.directory}", err=True)
                    finding = reported.finding
                    program = Program.from_source(finding.reduction["source"], str(reported.directory / "reduced.py"))
                    configuration = finding.reduction.get("configuration", finding.configuration)
                    rows = ablation.ablate(pool, program, finding.signature.as_run(),
                                           base=dataclasses.replace(config, configuration=configuration),
                                           parallel=pool.size)
                    finding.reduction.update(ablation=[row.as_json() for row in rows], label=ablation.label(rows),
                                             configurations_label=ablation.configurations_label(rows, configuration))
                    campaigns.save(reported)
        except PoolError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
    if pythons:
        _judge_versions(campaigns, pythons, run_config(backend=backend, timeout=timeout, memory_mb=memory_mb,
                                                       no_sandbox=no_sandbox), jobs=jobs)
    rows = write_reports(campaigns, known=known, versions=collect_versions(python or campaigns.python()), out=out)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    _print_table(rows, campaign_dirs)
    for line in known_hit_lines(campaign_dirs):
        click.echo(line)
    click.echo("report.md written in each finding directory" + (f" and copied to {out}/" if out else ""))


def _judge_versions(campaigns: Campaigns, pythons: tuple[str, ...], config: RunConfig, *, jobs: int | None) -> None:
    """Each distinct finding judged on every torch given, recorded in its finding.json."""
    distinct = campaigns.distinct()
    try:
        with open_torches(pythons, jobs=jobs, config=config) as torches:
            judge = VersionJudge(torches)
            for reported in distinct:
                click.echo(f"versions: {reported.directory}", err=True)
                reported.finding.versions = judge.judge(reported.directory, reported.finding).as_json()
                campaigns.save(reported)
    except ExecutorError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)


def _print_table(rows: list[dict], campaign_dirs: tuple[Path, ...]) -> None:  # type: ignore[type-arg]
    merged = sum(row["merged"] for row in rows)
    known = sum(1 for row in rows if row["known"])
    grouped = sorted({row["root_cause"] for row in rows if row["root_cause"]}, key=lambda name: int(name[1:]))
    table = Table(title=f"{len(rows)} distinct findings in {', '.join(map(str, campaign_dirs))}: "
                        f"{len(rows) - known} new, {known} known"
                        + (f" ({merged} more signatures merged into them after reduction)" if merged else ""),
                  caption="; ".join(f"{name}: {sum(1 for r in rows if r['root_cause'] == name)} findings of one root "
                                    "cause (reduced programs that differ only where they fail)" for name in grouped)
                  or None)
    for column in ("group", "kind", "summary", "hits", "reduced", "repro", "ablation", "taxonomy", "versions",
                   "known"):
        table.add_column(column, overflow="fold")
    previous = None
    for n, row in enumerate(rows):
        # new / known, fixed since (not to be filed), and a group's rows, each apart
        band = (bool(row["known"]), row["versions"] == "fixed_since", row["root_cause"])
        if n and band != previous:
            table.add_section()
        previous = band
        table.add_row(row["root_cause"] or "", row["kind"], row["summary"][:90], str(row["hits"]),
                      f"{row['reduced_lines']} lines" if row["reduced_lines"] else "-", "yes" if row["repro"] else "-",
                      row["ablation"] or "-", row["taxonomy"], _versions_cell(row), row["known"] or "new")
    Console(width=None if sys.stdout.isatty() else 200).print(table)


def _versions_cell(row: dict) -> str:  # type: ignore[type-arg]
    """"fixed since 2.14.1", "live", "-" when no versions were judged."""
    status = row["versions"]
    if not status:
        return "-"
    return "live" if status == "live_on_newest" else row["versions_line"].split(":", 1)[0]
