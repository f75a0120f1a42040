"""`mutate report`: a campaign's distinct findings as a table and one report.md each; over
several campaign directories (the instances of a synced campaign), each signature once.
Findings of one root cause (`mutator.findings.root_cause`) are shown together; findings filed
before (`--known`, `mutator.findings.known`) are listed apart, after the new ones."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from mutator.commands.common import EXIT_USAGE, run_config, run_options
from mutator.exec.pool import PoolError, WorkerPool
from mutator.findings import known as known_bugs
from mutator.findings import root_cause
from mutator.findings.finding import Finding
from mutator.findings.signature import Signature
from mutator.findings.store import FindingStore


@click.command()
@click.argument("campaign_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also copy every report.md here, one file per finding.")
@click.option("--no-ablation", is_flag=True, help="Do not run the ablation for reduced findings that lack one.")
@click.option("--known", "known_paths", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="Bugs filed before (repeatable): a campaign directory, a findings folder, a finding directory or "
                   "a folder of reproducer .py files. Findings with their signature or reduced program are listed "
                   "as known, after the new ones.")
@run_options
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON (stable field names).")
def report(campaign_dirs: tuple[Path, ...], out: Path | None, no_ablation: bool, known_paths: tuple[Path, ...],
           backend: str, timeout: float, memory_mb: int, jobs: int | None, no_sandbox: bool, as_json: bool) -> None:
    """Issue-ready reports of a campaign's distinct findings: a table, and report.md per finding.

    Given several campaign directories (the instances of a synced campaign), each
    signature is one finding: reported from the directory with the best of it (reduced,
    then found first), with the hits of all, and `also_in` listing the others.

    Findings whose reduced programs differ only where they fail (a crash on a value and a
    mismatch of it) are one root cause: shown together as a group (R1, R2, ...), kept as
    separate findings. With --known, findings filed before are marked and listed last."""
    from mutator.core import storage
    from mutator.reduce import ablation
    from mutator.report.issue import collect_versions, report_markdown, summary_row

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
        from mutator.core.program import Program

        config = run_config(backend=backend, timeout=timeout, memory_mb=memory_mb, no_sandbox=no_sandbox)
        try:
            with WorkerPool(workers=jobs, config=config) as pool:
                pool.wait_ready()
                for campaign_dir, finding in missing:
                    click.echo(f"ablation: {campaign_dir / finding.directory}", err=True)
                    program = Program.from_source(finding.reduction["source"],
                                                  str(campaign_dir / finding.directory / "reduced.py"))
                    rows = ablation.ablate(pool, program, finding.signature.base(),
                                           base=config, parallel=pool.size)
                    finding.reduction.update(ablation=[row.as_json() for row in rows], label=ablation.label(rows))
                    stores[campaign_dir].save(finding)
        except PoolError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
    versions = collect_versions()
    keyed = [(str(campaign_dir / finding.directory), campaign_dir, finding) for campaign_dir, finding in findings]
    group_of = {member.key: group for group in root_cause.groups((key, f) for key, _, f in keyed)
                for member in group.members}
    rows = []
    for key, campaign_dir, finding in _ordered(keyed, group_of, known):
        directory = campaign_dir / finding.directory
        group = groups[_key(stores, finding)]
        match = known.match(finding, directory=directory) or (known_bugs.Match(**finding.known) if finding.known
                                                                 else None)
        repro = directory / "repro.py"
        text = report_markdown(finding, repro_source=repro.read_text() if repro.exists() else None,
                               versions=versions,
                               related=root_cause.markdown_lines(group_of.get(key), key)
                               + known_bugs.markdown_lines(match))
        storage.write_text(directory / "report.md", text)
        if out is not None:
            storage.write_text(out / f"{Path(finding.directory).name}.md", text)
        row = dict(summary_row(finding), report=str(directory / "report.md"),
                   known=f"{match.where} (same {match.by})" if match else "",
                   root_cause=group_of[key].name if key in group_of else None,
                   same_root_cause_as=[m.key for m in group_of[key].others(key)] if key in group_of else [])
        if len(campaign_dirs) > 1:
            row.update(campaign=str(campaign_dir), hits=sum(f.hits for _, f in group),
                       also_in=[str(d / f.directory) for d, f in group[1:]])
        rows.append(row)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    _print_table(rows, campaign_dirs)
    for line in _known_hit_lines(campaign_dirs):
        click.echo(line)
    click.echo("report.md written in each finding directory" + (f" and copied to {out}/" if out else ""))


def _ordered(keyed: list[tuple[str, Path, Finding]], group_of: dict[str, root_cause.Group],
             known: known_bugs.KnownBugs) -> list[tuple[str, Path, Finding]]:
    """New findings first, then known ones; the members of a root-cause group together, where
    the first of them stands."""
    def is_known(item: tuple[str, Path, Finding]) -> bool:
        key, campaign_dir, finding = item
        return bool(finding.known) or known.match(finding, directory=campaign_dir / finding.directory) is not None

    ordered: list[tuple[str, Path, Finding]] = []
    placed: set[str] = set()
    for part in ([item for item in keyed if not is_known(item)], [item for item in keyed if is_known(item)]):
        keys = {key for key, _, _ in part}
        for item in part:
            if item[0] in placed:
                continue
            group = group_of.get(item[0])
            together = [other for other in part if group is not None and other[0] in keys
                        and any(m.key == other[0] for m in group.members)] or [item]
            ordered += together
            placed.update(key for key, _, _ in together)
    return ordered


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
    for column in ("group", "kind", "summary", "hits", "reduced", "repro", "ablation", "taxonomy", "known"):
        table.add_column(column, overflow="fold")
    previous = None
    for n, row in enumerate(rows):
        band = (bool(row["known"]), row["root_cause"])  # new / known, and a group's rows, each apart
        if n and band != previous:
            table.add_section()
        previous = band
        table.add_row(row["root_cause"] or "", row["kind"], row["summary"][:90], str(row["hits"]),
                      f"{row['reduced_lines']} lines" if row["reduced_lines"] else "-", "yes" if row["repro"] else "-",
                      row["ablation"] or "-", row["taxonomy"], row["known"] or "new")
    Console(width=None if sys.stdout.isatty() else 200).print(table)


def _known_hit_lines(campaign_dirs: tuple[Path, ...]) -> list[str]:
    """What each campaign counted instead of filing (its known.json)."""
    from mutator.core import storage

    lines = []
    for campaign_dir in campaign_dirs:
        try:
            data = storage.read_json(campaign_dir / known_bugs.KNOWN_FILE) if (campaign_dir / known_bugs.KNOWN_FILE).exists() else None
        except storage.StorageError as exc:
            lines.append(f"warning: {exc}")
            continue
        if data and data.get("signatures"):
            rows = data["signatures"]
            lines.append(f"{campaign_dir}: {sum(r.get('hits', 0) for r in rows)} hits of {len(rows)} signatures "
                         f"filed before were counted, not filed (see {campaign_dir / known_bugs.KNOWN_FILE})")
    return lines


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
