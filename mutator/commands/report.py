"""`mutate report`: a campaign's distinct findings as a table and one report.md each; over
several campaign directories (the instances of a synced campaign), each signature once."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from mutator.commands.common import EXIT_USAGE, run_config, run_options
from mutator.exec.pool import PoolError, WorkerPool
from mutator.findings import Finding, FindingStore, Signature


@click.command()
@click.argument("campaign_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also copy every report.md here, one file per finding.")
@click.option("--no-ablation", is_flag=True, help="Do not run the ablation for reduced findings that lack one.")
@run_options
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON (stable field names).")
def report(campaign_dirs: tuple[Path, ...], out: Path | None, no_ablation: bool, backend: str, timeout: float,
           memory_mb: int, jobs: int | None, no_sandbox: bool, as_json: bool) -> None:
    """Issue-ready reports of a campaign's distinct findings: a table, and report.md per finding.

    Given several campaign directories (the instances of a synced campaign), each
    signature is one finding: reported from the directory with the best of it (reduced,
    then found first), with the hits of all, and `also_in` listing the others."""
    from mutator import storage
    from mutator.reduce import ablation
    from mutator.report import collect_versions, report_markdown, summary_row

    for campaign_dir in campaign_dirs:
        if not (campaign_dir / "findings").is_dir():
            click.echo(f"error: {campaign_dir}: no findings/ directory; give a campaign directory", err=True)
            sys.exit(EXIT_USAGE)
    stores = {campaign_dir: FindingStore(campaign_dir) for campaign_dir in campaign_dirs}
    for store in stores.values():
        for problem in store.unreadable:
            click.echo(f"warning: {problem}", err=True)
    groups = _by_signature(stores)
    findings = sorted((group[0] for group in groups.values()),
                      key=lambda item: (not item[1].signature.verdict.is_frontend_bug, item[1].signature.verdict,
                                        -sum(f.hits for _, f in groups[_key(stores, item[1])]), item[1].directory))
    missing = [(d, f) for d, f in findings if f.reduction.get("confirmed") and not f.reduction.get("ablation")]
    if missing and not no_ablation:
        from mutator.program import Program

        config = run_config(backend=backend, timeout=timeout, memory_mb=memory_mb, no_sandbox=no_sandbox)
        try:
            with WorkerPool(workers=jobs, config=config) as pool:
                pool.wait_ready()
                for campaign_dir, finding in missing:
                    click.echo(f"ablation: {campaign_dir / finding.directory}", err=True)
                    program = Program.from_source(finding.reduction["source"],
                                                  str(campaign_dir / finding.directory / "reduced.py"))
                    rows = ablation.ablate(pool, program, finding.signature,
                                           base=config, parallel=pool.size)
                    finding.reduction.update(ablation=[row.as_json() for row in rows], label=ablation.label(rows))
                    stores[campaign_dir].save(finding)
        except PoolError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
    versions = collect_versions()
    rows = []
    for campaign_dir, finding in findings:
        directory = campaign_dir / finding.directory
        group = groups[_key(stores, finding)]
        repro = directory / "repro.py"
        text = report_markdown(finding, repro_source=repro.read_text() if repro.exists() else None,
                               versions=versions)
        storage.write_text(directory / "report.md", text)
        if out is not None:
            storage.write_text(out / f"{Path(finding.directory).name}.md", text)
        row = dict(summary_row(finding), report=str(directory / "report.md"))
        if len(campaign_dirs) > 1:
            row.update(campaign=str(campaign_dir), hits=sum(f.hits for _, f in group),
                       also_in=[str(d / f.directory) for d, f in group[1:]])
        rows.append(row)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    merged = sum(row["merged"] for row in rows)
    table = Table(title=f"{len(rows)} distinct findings in {', '.join(map(str, campaign_dirs))}"
                        + (f" ({merged} more signatures merged into them after reduction)" if merged else ""))
    for column in ("kind", "summary", "hits", "reduced", "repro", "ablation", "taxonomy"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(row["kind"], row["summary"][:90], str(row["hits"]),
                      f"{row['reduced_lines']} lines" if row["reduced_lines"] else "-", "yes" if row["repro"] else "-",
                      row["ablation"] or "-", row["taxonomy"])
    Console(width=None if sys.stdout.isatty() else 200).print(table)
    click.echo("report.md written in each finding directory" + (f" and copied to {out}/" if out else ""))


def _key(stores: dict[Path, FindingStore], finding: Finding) -> Signature:
    """A signature as every store knows it: one merged into another after reduction in any
    directory is that other one everywhere."""
    signature = finding.signature
    for store in stores.values():
        signature = store.aliases.get(signature, signature)
    return signature


def _by_signature(stores: dict[Path, FindingStore]) -> dict[Signature, list[tuple[Path, Finding]]]:
    """Every finding of every directory, by signature; in each group the best first: a
    confirmed reduction, then one the directory found itself (not known from a peer), then
    the earliest."""
    groups: dict[Signature, list[tuple[Path, Finding]]] = {}
    for directory, store in stores.items():
        for finding in store.findings.values():
            groups.setdefault(_key(stores, finding), []).append((directory, finding))
    for group in groups.values():
        group.sort(key=lambda item: (not item[1].reduction.get("confirmed"), bool(item[1].known_from),
                                     item[1].first_seen, str(item[0])))
    return groups
