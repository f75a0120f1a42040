"""The operator-facing commands: `mutate ops` lists (and with --measure rates) the mutation
operators, `mutate mutate` prints what they do to one program."""

from __future__ import annotations

import difflib
import json
import random
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from mutator.commands.common import EXIT_FINDINGS, EXIT_USAGE
from mutator.commands.progress import progress
from mutator.exec.pool import WorkerPool
from mutator.mutation.measure import measure
from mutator.mutation.mutator import Mutator
from mutator.mutation.operator import Declined
from mutator.mutation.registry import all_operators, by_id
from mutator.core.program import ProgramError, load_program, load_programs


@click.command(name="mutate")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--op", "op_ids", multiple=True, help="Only this operator (repeatable), e.g. E2.wrap_in_try.")
@click.option("--family", "families", multiple=True, help="Only operators of this family (repeatable), e.g. E2.")
@click.option("--seed", type=int, default=0, show_default=True, help="RNG seed: the same seed, the same mutants.")
@click.option("-n", "--count", type=click.IntRange(min=1), default=1, show_default=True, help="Mutants to print.")
@click.option("--recipe", default=None,
              help="Build the one mutant of this recipe (a JSON object, or a queue sidecar .json holding one): "
                   "what the fuzzer built from PATH, again.")
@click.option("--source", "whole", is_flag=True, help="Print the mutants' source instead of diffs.")
def mutate_command(path: str, op_ids: tuple[str, ...], families: tuple[str, ...], seed: int, count: int,
                   recipe: str | None, whole: bool) -> None:
    """Print mutants of PATH as unified diffs: what the operators do to a program."""
    program = _load_one(path)
    if recipe is not None:
        _rebuild(program, recipe, path, whole=whole)
        return
    mutator = Mutator(_select_operators(op_ids, families))
    rng = random.Random(seed)
    printed = 0
    for _ in range(count * 20):
        if printed == count:
            break
        mutant = mutator.mutate(program, rng) if not op_ids or len(mutator.operators) > 1 else \
            _single(mutator, program, rng)
        if mutant is None:
            continue
        printed += 1
        _show(program, mutant, f"# mutant {printed}: {mutant.provenance}", whole=whole)
    if printed == 0:
        click.echo(f"error: no operator applies to {path}", err=True)
        sys.exit(EXIT_FINDINGS)


def _show(program, mutant, heading: str, *, whole: bool) -> None:  # type: ignore[no-untyped-def]
    click.echo(heading)
    if whole:
        click.echo(mutant.program.source, nl=False)
        return
    click.echo("".join(difflib.unified_diff(program.source.splitlines(True), mutant.program.source.splitlines(True),
                                            fromfile=program.name, tofile=f"{program.name} ({mutant.provenance})")))


def _rebuild(program, text: str, path: str, *, whole: bool) -> None:  # type: ignore[no-untyped-def]
    """The mutant a recipe makes of `program` (reproducible: the fuzzer's workers build the same)."""
    from mutator.mutation.mutator import MutantBuilder, Recipe

    try:
        data = json.loads(Path(text).read_text(encoding="utf-8")) if Path(text).is_file() else json.loads(text)
        recipe = Recipe.from_json(data["recipe"] if "recipe" in data else data)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        click.echo(f"error: --recipe {text[:80]}: not a recipe ({type(exc).__name__}: {exc}); give the JSON "
                   "object a queue sidecar holds under \"recipe\", or the sidecar's path", err=True)
        sys.exit(EXIT_USAGE)
    built = MutantBuilder(all_operators()).build(program, recipe)
    if built.mutant is None:
        click.echo(f"error: the recipe makes no mutant of {path} (every operator it names declined)", err=True)
        sys.exit(EXIT_FINDINGS)
    _show(program, built.mutant, f"# {built.mutant.provenance}", whole=whole)


def _single(mutator: Mutator, program, rng: random.Random):  # type: ignore[no-untyped-def]
    result = mutator.apply(mutator.operators[0], program, rng)
    if isinstance(result, Declined):
        click.echo(f"# {result.op} declined: {result.reason}", err=True)
        return None
    return result


@click.command()
@click.option("--measure", "measure_dir", type=click.Path(exists=True), default=None,
              help="Measure each operator's applicability and validity on the programs here, through the pool.")
@click.option("--op", "op_ids", multiple=True, help="Only this operator (repeatable).")
@click.option("--family", "families", multiple=True, help="Only this family (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes for --measure.")
def ops(measure_dir: str | None, op_ids: tuple[str, ...], families: tuple[str, ...], as_json: bool,
        jobs: int | None) -> None:
    """List the mutation operators (id, family, description); --measure rates them on a corpus."""
    operators = _select_operators(op_ids, families)
    if measure_dir is None:
        if as_json:
            click.echo(json.dumps([dict(op=op.id, family=op.family, description=op.DESCRIPTION) for op in operators],
                                  indent=2))
            return
        table = Table()
        for column in ("operator", "family", "description"):
            table.add_column(column, overflow="fold")
        for op in operators:
            table.add_row(op.id, op.family, op.DESCRIPTION)
        Console(width=None if sys.stdout.isatty() else 200).print(table)
        return
    programs, errors = load_programs([measure_dir])
    for error in errors:
        click.echo(f"error: {error}", err=True)
    with WorkerPool(workers=jobs) as pool, progress(None, "running mutants", enabled=not as_json) as bar:
        results = measure(operators, programs, pool.submit, progress=bar.advance)
    if as_json:
        click.echo(json.dumps([r.as_json() for r in results], indent=2))
        return
    _print_measures(results, len(programs))


def _print_measures(results: list, programs: int) -> None:
    table = Table()
    for column in ("operator", "applies to", "mutants", "valid", "most common failure"):
        table.add_column(column, overflow="fold")
    for r in results:
        style = "red" if r.mutants == 0 or r.valid_rate < 0.2 else ""
        failure = r.failures.most_common(1)[0][0] if r.failures else ""
        table.add_row(f"[{style}]{r.op}[/]" if style else r.op, f"{r.applicable}/{programs}", str(r.mutants),
                      f"{r.valid_rate:.0%}", failure)
    console = Console(width=None if sys.stdout.isatty() else 200)
    console.print(table)
    mutants = sum(r.mutants for r in results)
    valid = sum(r.valid for r in results)
    console.print(f"{len(results)} operators, {mutants} distinct mutants, {valid} valid ({valid / max(1, mutants):.0%})")


def _select_operators(op_ids: tuple[str, ...], families: tuple[str, ...]) -> list:
    known = by_id()
    unknown = [op for op in op_ids if op not in known]
    if unknown:
        raise click.BadParameter(f"unknown operator {', '.join(unknown)}; `mutate ops` lists them", param_hint="--op")
    selected = [known[op] for op in op_ids] if op_ids else list(all_operators())
    if families:
        selected = [op for op in selected if op.family in families]
    if not selected:
        raise click.BadParameter(f"no operator in family {', '.join(families)}", param_hint="--family")
    return selected


def _load_one(path: str):  # type: ignore[no-untyped-def]
    try:
        return load_program(path)
    except ProgramError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
