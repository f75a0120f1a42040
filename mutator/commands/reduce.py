"""`mutate reduce`: reduce findings to the smallest program with the same signature."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console

from mutator.commands.common import EXIT_USAGE, run_config, run_options
from mutator.exec.pool import PoolError, WorkerPool


@click.command()
@click.argument("targets", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="For a program file: where the reduced program goes (a file, or a directory). "
                   "Default: NAME.reduced.py beside it. Finding directories get reduced.py inside.")
@click.option("--time-limit", type=click.FloatRange(min=1), default=None,
              help="Seconds per target; the smallest program so far is kept when it runs out.")
@click.option("--no-ablation", is_flag=True, help="Skip the backend and mode ablation.")
@run_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per target.")
def reduce(targets: tuple[Path, ...], out: Path | None, time_limit: float | None, no_ablation: bool, backend: str,
           timeout: float, memory_mb: int, jobs: int | None, no_sandbox: bool, as_json: bool) -> None:
    """Reduce findings: program files, or finding directories (their smallest.py).

    Keeps the smallest program with the same signature (verdict, exception, Dynamo frame or
    graph-break type, diverging observation), writes a standalone repro.py when it fails
    with plain python, and checks the finding under each backend and mode. Exit status: 0,
    or 2 when a target could not be reduced (it does not reproduce, or is not a program).
    """
    from mutator.reduce.targets import Targets

    if out is not None and len(targets) > 1 and not out.is_dir():
        click.echo(f"error: {out}: with several targets --out must be an existing directory", err=True)
        sys.exit(EXIT_USAGE)
    console = Console(stderr=True)
    config = run_config(backend=backend, timeout=timeout, memory_mb=memory_mb, no_sandbox=no_sandbox)
    outcomes = []
    try:
        with WorkerPool(workers=jobs, config=config) as pool:
            torch_version = pool.wait_ready()[0].torch_version
            reducer = Targets(pool, workers=pool.size, config=config, torch_version=torch_version,
                              time_limit=time_limit, ablate=not no_ablation)
            for target in targets:
                with console.status(f"{target}: checking that it reproduces") as status:
                    def progress(source: str, pass_name: str, target: Path = target) -> None:
                        lines = sum(1 for line in source.splitlines() if line.strip())
                        status.update(f"{target}: {lines} lines, {len(source)} characters ({pass_name})")
                    try:
                        outcome = reducer.reduce_path(target, out=out, on_progress=progress)
                    except PoolError:
                        raise
                    except Exception as exc:  # a bug of ours on one target: say so, go on with the rest
                        from mutator.reduce.targets import Outcome

                        outcome = Outcome(str(target), error=f"internal error of the reducer: "
                                                             f"{type(exc).__name__}: {exc}"[:500])
                outcomes.append(outcome)
                if as_json:
                    click.echo(json.dumps(outcome.as_json()))
                else:
                    _print_reduction(outcome)
    except PoolError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    if any(outcome.error for outcome in outcomes):
        sys.exit(EXIT_USAGE)


def _print_reduction(outcome) -> None:  # type: ignore[no-untyped-def]
    if outcome.error:
        click.echo(f"error: {outcome.target}: {outcome.error}", err=True)
        return
    data = outcome.as_json()
    click.echo(f"{outcome.target}: {data['signature']}: {data['lines_before']} -> {data['lines_after']} lines "
               f"({data['chars_before']} -> {data['chars_after']} characters) in {data['seconds']:.0f} s, "
               f"{data['checks']} checks" + ("" if data["confirmed"] else "; did NOT hold in fresh runs, kept as is"))
    click.echo(f"  repro: {data['repro']}")
    if outcome.rows:
        click.echo(f"  ablation: {data['label']}: " + ", ".join(f"{row.setting} {row.verdict}" for row in outcome.rows))
    for path in outcome.written:
        click.echo(f"  wrote {path}")
