"""`mutate minimize`: the smallest set of programs that covers every feature of a corpus."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from mutator.commands.common import EXIT_USAGE, coverage_option, run_config, run_options, summary_json_option
from mutator.exec.pool import PoolError, WorkerPool


@click.command()
@click.argument("dirs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="An empty (or new) directory for the minimised corpus.")
@coverage_option("are features, for programs without stored ones")
@run_options
@summary_json_option
def minimize(dirs: tuple[str, ...], out: Path, coverage_include: tuple[str, ...], backend: str, timeout: float,
             memory_mb: int, jobs: int | None, no_sandbox: bool, as_json: bool) -> None:
    """The smallest set of programs covering every feature of DIRS (campaign directories or folders).

    Features come from queue sidecars; programs without them run once, compiled, through
    the pool. Nothing in DIRS changes.
    """
    from mutator.core.features import semantic_features
    from mutator.campaign.minimize import minimize as minimize_corpus
    from mutator.core.observation import Mode

    if out.exists() and any(out.iterdir()):
        click.echo(f"error: {out}/ is not empty; choose a new directory for the minimised corpus", err=True)
        sys.exit(EXIT_USAGE)
    config = run_config(backend=backend, timeout=timeout, memory_mb=memory_mb, no_sandbox=no_sandbox)

    def features_of(programs):  # type: ignore[no-untyped-def]
        if not programs:
            return []
        with WorkerPool(workers=jobs, config=config, coverage=coverage_include) as pool:
            runs = [f.result() for f in [pool.submit(p, Mode.COMPILED) for p in programs]]
        return [(run.features | semantic_features(run), run.seconds) for run in runs]

    try:
        summary = minimize_corpus(dirs, out, features_of=features_of)
    except PoolError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    for error in summary["errors"]:  # type: ignore[union-attr]
        click.echo(f"error: {error}", err=True)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        click.echo(f"{summary['programs_before']} programs, {summary['features_before']} features -> "
                   f"{summary['programs_after']} programs, {summary['features_after']} features in {out}/ "
                   f"({summary['ran']} run for their features)")
