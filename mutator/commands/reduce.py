"""`mutate reduce`: reduce findings to the smallest program with the same signature."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import click
from rich.console import Console

from mutator.commands.common import EXIT_USAGE, config_option, python_option, run_config, run_options
from mutator.findings.readme import matters_summary
from mutator.exec.pool import PoolError, WorkerPool


@click.command()
@click.argument("targets", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="For a program file: where the reduced program goes (a file, or a directory). "
                   "Default: NAME.reduced.py beside it. Finding directories get reduced.py inside.")
@click.option("--time-limit", type=click.FloatRange(min=1), default=None,
              help="Seconds per target; the smallest program so far is kept when it runs out.")
@click.option("--no-ablation", is_flag=True, help="Skip the backend and mode ablation.")
@click.option("--matters-budget", type=click.IntRange(min=0), default=None,
              help="Variants of the reduced program to try for \"what matters\" (its constructs removed or "
                   "swapped for neighbours); 0 skips it.  [default: 24]")
@click.option("--variants", type=click.IntRange(min=0), default=0, show_default=True,
              help="For a finding directory: also reduce up to N of its variants (other triggers); those that "
                   "reduce to another bug are split off into findings of their own (DIR-splitN).")
@python_option
@run_options
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per target.")
def reduce(targets: tuple[Path, ...], out: Path | None, time_limit: float | None, no_ablation: bool,
           matters_budget: int | None, variants: int, python: str | None,
           backend: str, timeout: float, memory_mb: int, jobs: int | None, no_sandbox: bool, configuration: str,
           as_json: bool) -> None:
    """Reduce findings: program files, or finding directories (their smallest.py).

    Keeps the smallest program with the same signature (verdict, exception, Dynamo frame or
    graph-break type, diverging observation), writes a standalone repro.py when it fails
    with plain python, and checks the finding under each backend and mode. A finding is
    reduced under the Dynamo configuration it failed under (finding.json); a program file
    under --config. Exit status: 0, or 2 when a target could not be reduced (it does not
    reproduce, or is not a program).
    """
    from mutator.reduce import matters
    from mutator.reduce.driver import ReduceDriver

    if out is not None and len(targets) > 1 and not out.is_dir():
        click.echo(f"error: {out}: with several targets --out must be an existing directory", err=True)
        sys.exit(EXIT_USAGE)
    console = Console(stderr=True)
    config = run_config(backend=backend, timeout=timeout, memory_mb=memory_mb, no_sandbox=no_sandbox,
                        configuration=configuration)
    outcomes = []
    try:
        with WorkerPool(workers=jobs, config=config, python=python or sys.executable) as pool:
            pool.wait_ready()
            torch_version = pool.build.describe()
            reducer = ReduceDriver(pool, workers=pool.size, config=config, torch_version=torch_version,
                                   time_limit=time_limit, ablate=not no_ablation, python=python or sys.executable,
                                   matters_budget=matters.DEFAULT_BUDGET if matters_budget is None else matters_budget)
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
                        from mutator.reduce.driver import ReductionReport

                        outcome = ReductionReport(str(target), error=f"internal error of the reducer: "
                                                                     f"{type(exc).__name__}: {exc}"[:500])
                    split = _split(pool, config, target, variants, time_limit=time_limit,
                                   torch_version=torch_version, on_progress=progress,
                                   budget=matters.DEFAULT_BUDGET if matters_budget is None else matters_budget) \
                        if variants and not outcome.error and not _halfway(outcome) else None
                outcomes.append(outcome)
                if as_json:
                    click.echo(json.dumps(dict(outcome.as_json(), **({"variants": [v.as_json() for v in split]}
                                                                      if split is not None else {}))))
                else:
                    _print_reduction(outcome)
                    for line in _split_lines(split or []):
                        click.echo(line)
    except PoolError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    if any(outcome.error for outcome in outcomes):
        sys.exit(EXIT_USAGE)


def _split(pool, config, target: Path, limit: int, *, time_limit: float | None,  # type: ignore[no-untyped-def]
           torch_version: str, on_progress, budget: int) -> list | None:  # type: ignore[type-arg]
    """Reduce up to `limit` variants of the finding in `target` and split off other bugs
    (`mutator.reduce.split`); None when `target` is no finding directory (any more)."""
    from mutator.findings.store import FindingStore
    from mutator.reduce import matters
    from mutator.reduce.reducer import Reducer
    from mutator.reduce.split import split_variants
    from mutator.reduce.driver import is_finding_dir

    if not is_finding_dir(target):
        return None
    store = FindingStore(target.parent.parent, torch_version=torch_version, backend=config.backend)
    finding = store.at(target)
    if finding is None:  # merged into another after its reduction
        return None
    reducers: dict[str, Reducer] = {}

    def reducer_for(configuration: str) -> Reducer:  # a variant is reduced under the configuration it failed under
        if configuration not in reducers:
            reducers[configuration] = Reducer(pool, workers=pool.size,
                                              config=dataclasses.replace(config, configuration=configuration))
        return reducers[configuration]

    prober = matters.Prober(pool, budget=budget)

    def explain(reduction):  # type: ignore[no-untyped-def]
        target_of = reducer_for(reduction.check.configuration).target_of(reduction.check, reduction.signature)
        return prober.explain(target_of, original=reduction.original.source).as_json()

    return split_variants(reducer_for(finding.configuration), store, finding, limit=limit, time_limit=time_limit,
                          explain=explain if budget > 0 else None, on_progress=on_progress, reducer_for=reducer_for)


def _halfway(outcome) -> bool:  # type: ignore[no-untyped-def]
    """The finding's own reduction ran out of --time-limit: its variants are not compared with
    a program reduced halfway."""
    if outcome.reduction is not None and outcome.reduction.stats.timed_out:
        click.echo(f"  variants: not compared: the time limit ended {outcome.target}'s own reduction", err=True)
        return True
    return False


def _split_lines(outcomes: list) -> list[str]:  # type: ignore[type-arg]
    lines = []
    for outcome in outcomes:
        where = f" -> {outcome.into}" if outcome.verdict == "split" else ""
        detail = f" ({outcome.detail})" if outcome.detail else ""
        lines.append(f"  variant {outcome.key}: {outcome.verdict}{where}{detail}")
    return lines


def _print_reduction(outcome) -> None:  # type: ignore[no-untyped-def]
    if outcome.error:
        click.echo(f"error: {outcome.target}: {outcome.error}", err=True)
        return
    data = outcome.as_json()
    click.echo(f"{outcome.target}: {data['signature']}: {data['lines_before']} -> {data['lines_after']} lines "
               f"({data['chars_before']} -> {data['chars_after']} characters) in {data['seconds']:.0f} s, "
               f"{data['checks']} checks" + ("" if data["confirmed"] else "; did NOT hold in fresh runs, kept as is"))
    click.echo(f"  repro: {data['repro']}")
    if "matters" in data:
        click.echo(f"  what matters {matters_summary(data['matters'])}")
    if outcome.rows:
        click.echo(f"  ablation: {data['label']}: " + ", ".join(f"{row.setting} {row.verdict}" for row in outcome.rows))
    for path in outcome.written:
        click.echo(f"  wrote {path}")
