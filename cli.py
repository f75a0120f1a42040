"""The `mutate` command line. The only place where the parts are wired together."""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import random
import re
import signal
import sys
import time
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor, as_completed

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from mutator.campaign import Campaign, CampaignConfig, CampaignError
from mutator.check import Checker, CheckResult
from mutator.corpus import Corpus
from mutator.findings import FindingStore
from mutator.fuzzer import LLM_FAMILY, Budget, Fuzzer
from mutator.observation import RunConfig
from mutator.exec.pool import PoolError, WorkerPool
from mutator.mutation.measure import measure
from mutator.mutation.mutator import Mutator
from mutator.mutation.operator import Declined
from mutator.mutation.registry import all_operators, by_id
from mutator.program import ProgramError, load_program, load_programs
from mutator.check_json import check_to_json, verdict_style
from mutator.schedule import SCHEDULES
from mutator.storage import StorageError
from mutator.ui import LiveScreen, StatusLines, finding_lines, origin_lines, status_line

EXIT_FINDINGS = 1
EXIT_USAGE = 2


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """mutator: a mutation-based, coverage-guided fuzzer for TorchDynamo (torch.compile)."""


def run_options(f):  # type: ignore[no-untyped-def]
    """Options shared by every command that runs programs."""
    f = click.option("--backend", type=click.Choice(["eager", "aot_eager", "inductor"]), default="eager",
                     show_default=True, help="Backend for every torch.compile whose backend is a string or unset.")(f)
    f = click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
                     help="Seconds of wall clock per run before it counts as a hang.")(f)
    f = click.option("--memory-mb", type=click.IntRange(min=64), default=4096, show_default=True,
                     help="Memory a run may allocate beyond the warm worker's own.")(f)
    f = click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
                     help="Worker processes (default: one per core).")(f)
    return f


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@run_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array instead of a table.")
def run(paths: tuple[str, ...], backend: str, timeout: float, memory_mb: int, jobs: int | None, as_json: bool) -> None:
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
    config = RunConfig(backend=backend, timeout=timeout, memory_mb=memory_mb)
    try:
        with WorkerPool(workers=jobs, config=config) as pool:
            results = _check_all(Checker(pool), programs, pool.size, console, show_progress=not as_json)
    except PoolError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        console.print("interrupted")
        sys.exit(130)
    if as_json:
        click.echo(json.dumps([check_to_json(r) for r in results], indent=2))
    else:
        _print_table(Console(width=None if sys.stdout.isatty() else 200), results)
    if any(r.verdict.is_finding for r in results):
        sys.exit(EXIT_FINDINGS)
    if errors:
        sys.exit(EXIT_USAGE)


def _check_all(checker: Checker, programs: list, workers: int, console: Console,
               *, show_progress: bool) -> list[CheckResult]:
    # Each check keeps two runs in flight, so two checks per worker keep every worker busy.
    results: dict[int, CheckResult] = {}
    with ThreadPoolExecutor(max_workers=max(2, workers * 2)) as executor, Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console, transient=True, disable=not show_progress,
    ) as progress:
        task = progress.add_task("checking", total=len(programs))
        futures = {executor.submit(checker.check, p): i for i, p in enumerate(programs)}
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            progress.advance(task)
    return [results[i] for i in range(len(programs))]


def _print_table(console: Console, results: list[CheckResult]) -> None:
    table = Table(show_lines=False)
    table.add_column("program", overflow="fold")
    table.add_column("verdict")
    table.add_column("reason", overflow="fold", ratio=1)
    table.add_column("time", justify="right")
    for r in results:
        table.add_row(r.program.name, f"[{verdict_style(r.verdict)}]{r.verdict.name}[/]",
                      r.reason, f"{r.seconds:.2f}s")
    console.print(table)
    counts: dict[str, int] = {}
    for r in results:
        counts[r.verdict.name] = counts.get(r.verdict.name, 0) + 1
    console.print(", ".join(f"{n} {name}" for name, n in counts.items()))


class Duration(click.ParamType):
    """10m, 90s, 1h30m, or plain seconds."""

    name = "duration"

    def convert(self, value, param, ctx):  # type: ignore[no-untyped-def]
        if isinstance(value, (int, float)):
            return float(value)
        text = str(value).strip().lower()
        parts = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?", text)
        if not text or parts is None or not any(parts.groups()):
            self.fail(f"{value!r} is not a duration like 10m, 90s or 1h30m", param, ctx)
        hours, minutes, seconds = (float(g) if g else 0.0 for g in parts.groups())
        return hours * 3600 + minutes * 60 + seconds


CAMPAIGN_OPTIONS = ("corpus_dirs", "backend", "schedule", "seed", "timeout", "memory_mb", "coverage_include")


@main.command()
@click.option("--corpus", "corpus_dirs", multiple=True, type=click.Path(exists=True),
              help="Seed programs (files or directories; repeatable).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("corpus"), show_default=True,
              help="The campaign directory.")
@click.option("--time", "duration", type=Duration(), default=None, help="Stop after this long (10m, 1h30m, 90s).")
@click.option("--max-execs", type=click.IntRange(min=1), default=None,
              help="Stop after checking this many programs in this session (seeds included).")
@click.option("--schedule", type=click.Choice(sorted(SCHEDULES)), default="rare", show_default=True,
              help="Power schedule: which kept program to mutate next.")
@click.option("--seed", type=int, default=0, show_default=True, help="RNG seed of the campaign.")
@click.option("--resume", is_flag=True, help="Continue the campaign in --out where it stopped.")
@click.option("--no-ui", is_flag=True, help="Print a status line every few seconds instead of the live screen.")
@click.option("--coverage-include", multiple=True, default=("torch/_dynamo",), show_default=True,
              help="Paths under site-packages whose arcs are coverage (repeatable), e.g. torch/fx.")
@click.option("--no-reduce", is_flag=True, help="Do not reduce new findings in the background.")
@click.option("--no-repair", is_flag=True, help="Do not repair invalid mutants (neither by rules nor by the LLM).")
@click.option("--no-llm", is_flag=True, help="Do not use an LLM even when OPENAI_BASE_URL or OPENAI_API_KEY is set.")
@click.option("--llm-model", default=None,
              help="The model for repair and family L (default: the campaign's, else $MUTATOR_LLM_MODEL, "
                   "else gpt-4o-mini).")
@click.option("--llm-budget-calls", type=click.IntRange(min=0), default=None,
              help="Ask the LLM at most this many times in this session (cached answers are free).")
@click.option("--llm-budget-tokens", type=click.IntRange(min=0), default=None,
              help="Stop asking the LLM once this many tokens are spent in this session.")
@click.option("--reduce-share", type=click.FloatRange(min=0.01, max=1.0), default=0.25, show_default=True,
              help="At most this share of the workers' time goes to reducing findings in the background.")
@run_options
@click.pass_context
def fuzz(ctx: click.Context, corpus_dirs: tuple[str, ...], out: Path, duration: float | None, max_execs: int | None,
         schedule: str, seed: int, resume: bool, no_ui: bool, coverage_include: tuple[str, ...], no_reduce: bool,
         reduce_share: float, no_repair: bool, no_llm: bool, llm_model: str | None, llm_budget_calls: int | None,
         llm_budget_tokens: int | None, backend: str, timeout: float, memory_mb: int, jobs: int | None) -> None:
    """Fuzz torch.compile: mutate the corpus, keep what reaches new Dynamo code, file findings.

    Invalid mutants are repaired by rules; with an LLM endpoint in the environment
    (OPENAI_BASE_URL for a local OpenAI-compatible server, OPENAI_API_KEY for OpenAI) also
    by the LLM, which then writes mutants of its own too (family L)."""
    try:
        if resume:
            _refuse_changed_options(ctx, out)
            campaign = Campaign.resume(out)
        else:
            if not corpus_dirs:
                raise click.UsageError("--corpus is required to start a campaign (or --resume one)")
            campaign = Campaign.create(out, CampaignConfig(
                corpus=tuple(corpus_dirs), backend=backend, schedule=schedule, seed=seed, timeout=timeout,
                memory_mb=memory_mb, coverage=tuple(coverage_include)))
        llm_config = _llm_config(campaign, no_llm=no_llm, model=llm_model, budget_calls=llm_budget_calls,
                                 budget_tokens=llm_budget_tokens)
    except (CampaignError, StorageError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    config = campaign.config
    seeds: list = []
    if not resume:
        seeds, errors = load_programs(list(config.corpus))
        for error in errors:
            click.echo(f"error: {error}", err=True)
        if not seeds:
            click.echo("error: no seed programs in " + ", ".join(config.corpus), err=True)
            sys.exit(EXIT_USAGE)
    run_config = RunConfig(backend=config.backend, timeout=config.timeout, memory_mb=config.memory_mb)
    console = Console(stderr=True)
    with WorkerPool(workers=jobs, config=run_config, coverage=config.coverage) as pool:
        try:
            ready = pool.wait_ready()
        except PoolError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
        torch_version = ready[0].torch_version if ready else ""
        fuzzer = _build_fuzzer(campaign, pool, torch_version)
        fuzzer.repair_rules = not no_repair
        _attach_llm(fuzzer, llm_config, campaign, no_repair=no_repair, no_llm=no_llm)
        if not no_reduce:
            from mutator.reduce.background import BackgroundReduction

            fuzzer.reduction = BackgroundReduction(pool, campaign.root, workers=pool.size, config=run_config,
                                                   torch_version=torch_version, max_share=reduce_share)
        title = f"mutate fuzz: {campaign.root} ({config.backend} backend, {config.schedule} schedule, {pool.size} workers)"
        show = StatusLines() if no_ui or not console.is_terminal else LiveScreen(console, title)
        interrupts = _GracefulStop(fuzzer)
        started = time.monotonic()
        try:
            with interrupts, show:
                if seeds:
                    fuzzer.seed(seeds, on_progress=show)
                remaining = Budget(
                    max_execs=None if max_execs is None else max(0, max_execs - fuzzer.session_execs),
                    seconds=None if duration is None else max(0.0, duration - (time.monotonic() - started)))
                if remaining.max_execs != 0 and not fuzzer.stopping:
                    fuzzer.run(remaining, on_progress=show)
        except CampaignError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
        except KeyboardInterrupt:  # the second Ctrl-C: stop now, keep what is on disk
            click.echo("stopped", err=True)
        finally:
            if fuzzer.reduction is not None:
                fuzzer.reduction.close()
                fuzzer.collect_reductions()
            if fuzzer.llm is not None:
                fuzzer.llm.close()
            fuzzer.save(force=True)
            campaign.close()
    _print_summary(fuzzer)


def _llm_config(campaign: Campaign, *, no_llm: bool, model: str | None, budget_calls: int | None,
                budget_tokens: int | None):  # type: ignore[no-untyped-def]
    """The LLM of this session, from the environment (never from disk: the key is read
    there only), with the model the campaign used unless --llm-model says otherwise;
    None when no endpoint is configured."""
    from mutator.llm import LLMConfig

    if no_llm:
        return None
    stored = campaign.config.llm or {}
    config = LLMConfig.from_env(model=model or stored.get("model"), budget_calls=budget_calls,
                                budget_tokens=budget_tokens)
    if config is not None and campaign.config.llm != config.public():
        campaign.save_config(dataclasses.replace(campaign.config, llm=config.public()))
    return config


def _attach_llm(fuzzer: Fuzzer, config, campaign: Campaign, *, no_repair: bool,  # type: ignore[no-untyped-def]
                no_llm: bool) -> None:
    """Repair by the LLM and family L, beside the loop; said once either way."""
    if config is None:
        why = "(--no-llm)" if no_llm else ("set OPENAI_BASE_URL (a local OpenAI-compatible server) or "
                                          "OPENAI_API_KEY (OpenAI) to turn them on")
        click.echo(f"LLM repair and family L are off: {why}" + ("" if no_repair else "; rules still repair"),
                   err=True)
        return
    from mutator.llm import LLM
    from mutator.llm.lane import LLMLane
    from mutator.llm.rewrite import LLMMutation
    from mutator.repair.llm import LLMRepairer

    llm = LLM(config, campaign.root / "llm-cache")
    fuzzer.llm = LLMLane(llm)
    fuzzer.llm_repairer = None if no_repair else LLMRepairer(llm)
    fuzzer.llm_mutation = LLMMutation(llm)
    fuzzer.mutator.add_family(LLM_FAMILY)
    click.echo(f"LLM: {config.describe()}: " + ("" if no_repair else "repairs invalid mutants and ")
               + "writes mutants of family L", err=True)


def _build_fuzzer(campaign: Campaign, pool: WorkerPool, torch_version: str) -> Fuzzer:
    config = campaign.config
    corpus, coverage = Corpus(), campaign.load_coverage()
    for entry in campaign.load_entries():
        corpus.add(entry)
        coverage.hits.update({f: coverage.hits.get(f, 1) for f in entry.features})
    fuzzer = Fuzzer(
        corpus=corpus, coverage=coverage, mutator=Mutator(all_operators(), max_stack=config.max_stack),
        schedule=SCHEDULES[config.schedule](), checker=Checker(pool),
        store=FindingStore(campaign.root, torch_version=torch_version, backend=config.backend),
        campaign=campaign, rng=random.Random(config.seed), inflight=2 * pool.size, health=pool.health,
    )
    fuzzer.restore(campaign.load_stats())
    fuzzer.rng = random.Random(f"{config.seed}/{fuzzer.stats.execs}")  # a resumed session does not replay
    return fuzzer


def _refuse_changed_options(ctx: click.Context, out: Path) -> None:
    explicit = [name for name in CAMPAIGN_OPTIONS
                if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE]
    if explicit and (out / "campaign.json").exists():
        stored = json.loads((out / "campaign.json").read_text())
        key = {"corpus_dirs": "corpus", "coverage_include": "coverage"}
        changed = [n for n in explicit if _as_stored(n, ctx.params[n]) != _as_stored(n, stored.get(key.get(n, n)))]
        if changed:
            names = ", ".join("--" + n.replace("_dirs", "").replace("_", "-") for n in changed)
            raise click.UsageError(f"{names}: a resumed campaign keeps the settings in {out}/campaign.json")


def _as_stored(name: str, value):  # type: ignore[no-untyped-def]
    if name == "corpus_dirs":
        return [os.path.normpath(v) for v in value]
    return list(value) if isinstance(value, (tuple, list)) else value


class _GracefulStop:
    """First Ctrl-C: stop taking new work and finish what is in flight. Second: stop now."""

    def __init__(self, fuzzer: Fuzzer) -> None:
        self.fuzzer = fuzzer
        self._previous = None

    def __enter__(self) -> _GracefulStop:
        self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGINT, self._previous)

    def _handle(self, signum, frame) -> None:  # type: ignore[no-untyped-def]
        if self.fuzzer.stopping:
            raise KeyboardInterrupt
        self.fuzzer.stopping = True
        print("\nstopping: finishing the programs in flight (Ctrl-C again to stop at once)", file=sys.stderr)


def _print_summary(fuzzer: Fuzzer) -> None:
    snapshot = fuzzer.snapshot()
    click.echo(status_line(snapshot))
    for line in finding_lines(fuzzer.store.findings.values(), fuzzer.campaign.root):
        click.echo(line)
    if fuzzer.set_aside:
        click.echo(f"  {len(fuzzer.set_aside)} seeds set aside (see {fuzzer.campaign.root / 'set_aside.json'})")
    if fuzzer.reduction is not None:
        unreduced = sum(1 for f in fuzzer.store.findings.values() if not f.reduction)
        click.echo(f"  {fuzzer.stats.reduced} findings reduced in the background, {fuzzer.stats.merged} merged"
                   + (f"; {unreduced} not reduced yet (next session, or mutate reduce "
                      f"{fuzzer.campaign.root}/findings/*)" if unreduced else ""))
        if fuzzer.stats.reduce_failed:
            click.echo(f"  {fuzzer.stats.reduce_failed} reductions failed; the last: {fuzzer.stats.last_reduce_error}")
    for line in origin_lines(fuzzer.snapshot()):
        click.echo("  " + line)


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Where the programs go (and findings/ for tests that already fail); may exist.")
@click.option("--coverage-include", multiple=True, default=("torch/_dynamo",), show_default=True,
              help="Paths under site-packages whose arcs tell duplicates apart (repeatable).")
@run_options
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def harvest(paths: tuple[str, ...], out: Path, coverage_include: tuple[str, ...], backend: str, timeout: float,
            memory_mb: int, jobs: int | None, as_json: bool) -> None:
    """Programs from test files and reproducer scripts: one per test that compiles something.

    Every candidate is checked through the pool: valid ones are written to --out with a
    provenance header, duplicates (same coverage) dropped, failing ones filed in
    --out/findings/. One file or test that cannot be processed never stops the run: each
    gets one `error:` line on stderr and a place in the summary (`errors`, `failures` in
    --json). Exit status: 0 when every file and test was processed (tests that compile
    nothing, are skipped, invalid, duplicates or already failing included); 2 when a file
    could not be read, parsed or taken apart, or a test could not be extracted, made a
    program, checked or written.
    """
    from mutator.harvest.harvester import Harvester

    console = Console(stderr=True)
    config = RunConfig(backend=backend, timeout=timeout, memory_mb=memory_mb)
    try:
        with WorkerPool(workers=jobs, config=config, coverage=coverage_include) as pool:
            torch_version = pool.wait_ready()[0].torch_version
            harvester = Harvester(Checker(pool).check, FindingStore(out, torch_version=torch_version,
                                                                    backend=backend),
                                  out, torch_version=torch_version, workers=pool.size)
            report = _harvest_with_progress(harvester, paths, console, show=not as_json)
    except PoolError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
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


def _harvest_with_progress(harvester, paths, console: Console, *, show: bool):  # type: ignore[no-untyped-def]
    from mutator.harvest.harvester import HarvestReport

    report = HarvestReport()
    candidates = harvester.candidates(paths, report)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True, disable=not show) as progress:
        task = progress.add_task("validating", total=len(candidates))
        harvester.validate(candidates, report, progress=lambda n: progress.advance(task, n))
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
            ("already failing (filed)", len(report.already_failing))]
    rows += [(f"not harvested: {why}", n) for why, n in sorted(report.not_harvested.items())]
    rows += [(f"invalid: {why}", n) for why, n in sorted(report.invalid.items())]
    rows += [("files not processed (errors)", len(report.errors))] if report.errors else []
    rows += [(f"failed: {why}", n) for why, n in sorted(report.failed.items())]
    for what, n in rows:
        table.add_row(what, str(n))
    console.print(table)
    for failing in report.already_failing:
        console.print(f"  [bold red]{failing['verdict']}[/] {failing['origin']}: {failing['reason'][:160]}")
    console.print(f"programs in {out}/, findings in {out}/findings/")


@main.command()
@click.option("--family", required=True, help="The taxonomy class to write programs for: A1-A4, B1, B2, C, D, E1-E4, "
                                               "F1, F2 or G1-G3 (mutator/llm/taxonomy.md).")
@click.option("-n", "--count", type=click.IntRange(min=1), default=20, show_default=True,
              help="Programs to ask the LLM for (one request each).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where kept programs go (findings/ for failing ones, .llm-cache/ for answers). "
                   "Default: seeds/generated/FAMILY.")
@click.option("--from-findings", "campaign_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=None, help="Ask for siblings of the reduced programs of this campaign's findings of the class "
                                 "(of all its findings when none is of the class).")
@click.option("--llm-model", default=None, help="The model (default: $MUTATOR_LLM_MODEL, else gpt-4o-mini).")
@click.option("--llm-budget-calls", type=click.IntRange(min=0), default=None,
              help="Ask the LLM at most this many times (answers from the cache are free).")
@click.option("--llm-budget-tokens", type=click.IntRange(min=0), default=None,
              help="Stop asking once this many tokens are spent.")
@run_options
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def generate(family: str, count: int, out: Path | None, campaign_dir: Path | None, llm_model: str | None,
             llm_budget_calls: int | None, llm_budget_tokens: int | None, backend: str, timeout: float,
             memory_mb: int, jobs: int | None, as_json: bool) -> None:
    """New seed programs for one taxonomy class, written by an LLM and checked through the pool.

    The endpoint comes from the environment: OPENAI_BASE_URL (a local OpenAI-compatible
    server) and/or OPENAI_API_KEY. Valid new programs go to --out with a provenance
    header, duplicates (same text or coverage) are dropped, programs that already fail
    under torch.compile are filed in --out/findings/. Exit status: 0, or 2 for usage
    errors and when the LLM answered no request at all.
    """
    from mutator.generate import Generator, seed_summaries, siblings_from_findings
    from mutator.llm import LLM, LLMConfig, taxonomy

    try:
        cls = taxonomy.get(family)
    except KeyError as exc:
        click.echo(f"error: --family: {exc.args[0]}", err=True)
        sys.exit(EXIT_USAGE)
    llm_config = LLMConfig.from_env(model=llm_model, budget_calls=llm_budget_calls, budget_tokens=llm_budget_tokens)
    if llm_config is None:
        click.echo("error: no LLM endpoint: set OPENAI_BASE_URL (a local server, e.g. http://localhost:11434/v1) "
                   "or OPENAI_API_KEY (OpenAI)", err=True)
        sys.exit(EXIT_USAGE)
    out = out if out is not None else Path("seeds") / "generated" / cls.code
    siblings = []
    if campaign_dir is not None:
        try:
            siblings = siblings_from_findings(campaign_dir, cls.code)
        except (StorageError, ProgramError) as exc:
            click.echo(f"error: --from-findings: {exc}", err=True)
            sys.exit(EXIT_USAGE)
        if not siblings:
            click.echo(f"error: --from-findings: {campaign_dir} has no finding with a reduced.py or smallest.py",
                       err=True)
            sys.exit(EXIT_USAGE)
    avoid = seed_summaries(Path(__file__).resolve().parent / "seeds", cls.code)
    config = RunConfig(backend=backend, timeout=timeout, memory_mb=memory_mb)
    console = Console(stderr=True)
    try:
        with LLM(llm_config, out / ".llm-cache") as llm, \
                WorkerPool(workers=jobs, config=config, coverage=("torch/_dynamo",)) as pool:
            torch_version = pool.wait_ready()[0].torch_version
            generator = Generator(llm, Checker(pool).check, FindingStore(out, torch_version=torch_version,
                                                                         backend=backend),
                                  out, torch_version=torch_version, workers=pool.size)
            with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          console=console, transient=True, disable=as_json) as progress:
                task = progress.add_task(f"generating {cls.code}", total=count)
                report = generator.generate(cls, count, siblings_of=siblings, avoid=avoid,
                                            progress=lambda n: progress.advance(task, n))
    except PoolError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:  # what was kept or filed so far is on disk already
        click.echo("interrupted", err=True)
        sys.exit(130)
    if as_json:
        click.echo(json.dumps(report.as_json(), indent=2))
    else:
        _print_generate(report, out, llm_config.describe(), campaign_dir)
    if report.answered == 0:
        failures = ", ".join(f"{why} {n}" for why, n in sorted(report.llm_failures.items()))
        click.echo(f"error: the LLM ({llm_config.describe()}) answered none of {report.asked} requests ({failures})",
                   err=True)
        sys.exit(EXIT_USAGE)


def _print_generate(report, out: Path, endpoint: str,  # type: ignore[no-untyped-def]
                    campaign_dir: Path | None) -> None:
    def counts(counter: dict[str, int]) -> str:
        return ", ".join(f"{what} {n}" for what, n in sorted(counter.items()))

    click.echo(f"mutate generate {report.family}: {report.asked} asked of {endpoint}, {report.answered} answered "
               f"({report.cached} from the cache)")
    if campaign_dir is not None and report.siblings_of:
        scope = ("of the class" if report.siblings_of[0]["of_class"]
                 else f"of any class (none of {campaign_dir} is attributed to {report.family})")
        click.echo(f"  siblings of {len(report.siblings_of)} findings {scope}")
    click.echo(f"valid {len(report.kept)}, invalid {report.rejected_count}, duplicate {report.duplicate}, "
               f"already failing {len(report.already_failing)}, LLM failures {sum(report.llm_failures.values())}, "
               f"tokens {report.tokens}")
    invalid = {"no code": report.no_code, "not a program": report.not_a_program, "unstable": report.unstable,
               **report.invalid}
    if report.rejected_count:
        click.echo(f"  invalid: {counts({what: n for what, n in invalid.items() if n})}")
    if report.llm_failures:
        click.echo(f"  LLM failures: {counts(report.llm_failures)}")
    for path in report.kept:
        click.echo(f"  kept {path}")
    for failing in report.already_failing:
        click.echo(f"  already failing: {failing['verdict']} {failing['finding']}: {str(failing['reason'])[:160]}")
    click.echo(f"programs in {out}/, findings in {out}/findings/")


@main.command()
@click.argument("dirs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="An empty (or new) directory for the minimised corpus.")
@click.option("--coverage-include", multiple=True, default=("torch/_dynamo",), show_default=True,
              help="Paths under site-packages whose arcs are features, for programs without stored ones.")
@run_options
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def minimize(dirs: tuple[str, ...], out: Path, coverage_include: tuple[str, ...], backend: str, timeout: float,
             memory_mb: int, jobs: int | None, as_json: bool) -> None:
    """The smallest set of programs covering every feature of DIRS (campaign directories or folders).

    Features come from queue sidecars; programs without them run once, compiled, through
    the pool. Nothing in DIRS changes.
    """
    from mutator.features import semantic_features
    from mutator.minimize import minimize as minimize_corpus
    from mutator.observation import Mode

    if out.exists() and any(out.iterdir()):
        click.echo(f"error: {out}/ is not empty; choose a new directory for the minimised corpus", err=True)
        sys.exit(EXIT_USAGE)
    config = RunConfig(backend=backend, timeout=timeout, memory_mb=memory_mb)

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


@main.command()
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
           timeout: float, memory_mb: int, jobs: int | None, as_json: bool) -> None:
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
    config = RunConfig(backend=backend, timeout=timeout, memory_mb=memory_mb)
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


@main.command()
@click.argument("campaign_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also copy every report.md here, one file per finding.")
@click.option("--no-ablation", is_flag=True, help="Do not run the ablation for reduced findings that lack one.")
@run_options
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON (stable field names).")
def report(campaign_dir: Path, out: Path | None, no_ablation: bool, backend: str, timeout: float, memory_mb: int,
           jobs: int | None, as_json: bool) -> None:
    """Issue-ready reports of a campaign's distinct findings: a table, and report.md per finding."""
    from mutator import storage
    from mutator.reduce import ablation
    from mutator.report import collect_versions, report_markdown, summary_row

    if not (campaign_dir / "findings").is_dir():
        click.echo(f"error: {campaign_dir}: no findings/ directory; give a campaign directory", err=True)
        sys.exit(EXIT_USAGE)
    store = FindingStore(campaign_dir)
    findings = sorted(store.findings.values(), key=lambda f: (not f.signature.verdict.is_frontend_bug,
                                                              f.signature.verdict, -f.hits, f.directory))
    missing = [f for f in findings if f.reduction.get("confirmed") and not f.reduction.get("ablation")]
    if missing and not no_ablation:
        from mutator.program import Program

        config = RunConfig(backend=backend, timeout=timeout, memory_mb=memory_mb)
        try:
            with WorkerPool(workers=jobs, config=config) as pool:
                pool.wait_ready()
                for finding in missing:
                    click.echo(f"ablation: {finding.directory}", err=True)
                    program = Program.from_source(finding.reduction["source"],
                                                  str(campaign_dir / finding.directory / "reduced.py"))
                    rows = ablation.ablate(pool, program, finding.signature,
                                           base=config, parallel=pool.size)
                    finding.reduction.update(ablation=[row.as_json() for row in rows], label=ablation.label(rows))
                    store.save(finding)
        except PoolError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
    versions = collect_versions()
    rows = []
    for finding in findings:
        directory = campaign_dir / finding.directory
        repro = directory / "repro.py"
        text = report_markdown(finding, repro_source=repro.read_text() if repro.exists() else None,
                               versions=versions)
        storage.write_text(directory / "report.md", text)
        if out is not None:
            storage.write_text(out / f"{Path(finding.directory).name}.md", text)
        rows.append(dict(summary_row(finding), report=str(directory / "report.md")))
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    merged = sum(row["merged"] for row in rows)
    table = Table(title=f"{len(rows)} distinct findings in {campaign_dir}"
                        + (f" ({merged} more signatures merged into them after reduction)" if merged else ""))
    for column in ("kind", "summary", "hits", "reduced", "repro", "ablation", "taxonomy"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(row["kind"], row["summary"][:90], str(row["hits"]),
                      f"{row['reduced_lines']} lines" if row["reduced_lines"] else "-", "yes" if row["repro"] else "-",
                      row["ablation"] or "-", row["taxonomy"])
    Console(width=None if sys.stdout.isatty() else 200).print(table)
    click.echo("report.md written in each finding directory" + (f" and copied to {out}/" if out else ""))


@main.command()
@click.argument("campaign_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The PNG to write. Default: CAMPAIGN_DIR/plot.png.")
def plot(campaign_dir: Path, out: Path | None) -> None:
    """Arcs, corpus size, findings and execs/s over time, as a PNG (like afl-plot)."""
    from mutator.plot import PlotError, plot as draw

    try:
        path = draw(campaign_dir, out or campaign_dir / "plot.png")
    except PlotError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(f"wrote {path}")


@main.command(name="mutate")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--op", "op_ids", multiple=True, help="Only this operator (repeatable), e.g. E2.wrap_in_try.")
@click.option("--family", "families", multiple=True, help="Only operators of this family (repeatable), e.g. E2.")
@click.option("--seed", type=int, default=0, show_default=True, help="RNG seed: the same seed, the same mutants.")
@click.option("-n", "--count", type=click.IntRange(min=1), default=1, show_default=True, help="Mutants to print.")
def mutate_command(path: str, op_ids: tuple[str, ...], families: tuple[str, ...], seed: int, count: int) -> None:
    """Print mutants of PATH as unified diffs: what the operators do to a program."""
    program = _load_one(path)
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
        click.echo(f"# mutant {printed}: {mutant.provenance}")
        click.echo("".join(difflib.unified_diff(program.source.splitlines(True), mutant.program.source.splitlines(True),
                                                fromfile=program.name, tofile=f"{program.name} ({mutant.provenance})")))
    if printed == 0:
        click.echo(f"error: no operator applies to {path}", err=True)
        sys.exit(EXIT_FINDINGS)


def _single(mutator: Mutator, program, rng: random.Random):  # type: ignore[no-untyped-def]
    result = mutator.apply(mutator.operators[0], program, rng)
    if isinstance(result, Declined):
        click.echo(f"# {result.op} declined: {result.reason}", err=True)
        return None
    return result


@main.command()
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
    console = Console(stderr=True)
    with WorkerPool(workers=jobs) as pool, Progress(
        TextColumn("running mutants"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console,
        transient=True, disable=as_json,
    ) as progress:
        task = progress.add_task("measure", total=None)
        results = measure(operators, programs, pool.submit, progress=lambda: progress.advance(task))
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


if __name__ == "__main__":
    main()
