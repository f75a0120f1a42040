"""`mutate fuzz`: the campaign. Wires the corpus, the Mutator, the schedule, the executor
(the local pool, or Ray actors), the checker and the findings into a Fuzzer, with the
lanes this session runs beside the loop (repair, the LLM's family L, sync with peers,
background reduction: `mutator/campaign/lanes/`), and the live screen or status lines."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import click
from rich.console import Console

from mutator.campaign.directory import Campaign, CampaignConfig, CampaignError, chosen_seed
from mutator.judge.check import Checker, untraced
from mutator.commands.common import (EXIT_USAGE, Duration, absolute_interpreters, configurations_option,
                                     offered_configurations, open_executor, python_option, ray_option, run_config,
                                     run_options)
from mutator.campaign.configurations import SWEEP_SHARE, ConfigurationSchedule
from mutator.core.configurations import CAMPAIGN_CONFIGURATIONS
from mutator.core.build import Build
from mutator.core.features import CAMPAIGN_COVERAGE, DYNAMO_SIGNALS, MONITORING_TRACER
from mutator.core.observation import RunConfig
from mutator.campaign.corpus import Corpus
from mutator.exec import ExecutorError
from mutator.exec.pool import WorkerPool
from mutator.findings.store import FindingStore
from mutator.campaign.filing import Filing
from mutator.campaign.fuzzer import ARC_SHARE, Budget, Fuzzer
from mutator.campaign.lane import Lane
from mutator.campaign.lanes.confirming import ConfirmLane, status_counts
from mutator.campaign.lanes.confirming import describe as describe_versions
from mutator.campaign.lanes.llm import LLMAnswers, LLMMutationLane
from mutator.campaign.lanes.peers import SyncLane
from mutator.campaign.lanes.reducing import ReductionLane
from mutator.campaign.lanes.repair import RepairLane
from mutator.campaign.suite import SuiteHarvest, harvester_factory, is_suite
from mutator.commands.progress import progress
from mutator.findings.known import KnownBugs, KnownError, KnownHits
from mutator.mutation.mutator import Mutator
from mutator.mutation.registry import all_operators
from mutator.core.program import load_programs
from mutator.campaign.schedule import SCHEDULES
from mutator.core.storage import StorageError
from mutator.reduce.background import BackgroundReduction
from mutator.report.torch_index import TorchIndex, remind
from mutator.report.version_judge import Torch, VersionJudge
from mutator.campaign.sync import SYNC_EVERY, Sync, SyncError, instance_directory
from mutator.campaign.ui import LiveScreen, StatusLines, finding_lines, origin_lines, status_line

WARM_UP = "workers: warm-up (import torch, warm Dynamo)"
CAMPAIGN_OPTIONS = ("corpus_dirs", "backend", "schedule", "seed", "timeout", "memory_mb", "coverage_include",
                    "no_splice", "no_feedback", "max_stack", "no_avoid_known", "sweep_share", "arc_share")


@click.command()
@click.option("--corpus", "corpus_dirs", multiple=True, type=click.Path(exists=True),
              help="Seed programs (files or directories; repeatable).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("corpus"), show_default=True,
              help="The campaign directory.")
@click.option("--time", "duration", type=Duration(), default=None, help="Stop after this long (10m, 1h30m, 90s).")
@click.option("--max-execs", type=click.IntRange(min=1), default=None,
              help="Stop after checking this many programs in this session (seeds included).")
@click.option("--schedule", type=click.Choice(sorted(SCHEDULES)), default="rare", show_default=True,
              help="Power schedule: which kept program to mutate next.")
@click.option("--seed", type=int, default=None,
              help="RNG seed of the campaign. Default: from --name for an instance of --sync-dir (instances "
                   "differ), else from the clock; campaign.json keeps it.")
@click.option("--resume", is_flag=True, help="Continue the campaign in --out where it stopped.")
@click.option("--no-ui", is_flag=True, help="Print a status line every few seconds instead of the live screen.")
@click.option("--coverage-include", multiple=True, default=CAMPAIGN_COVERAGE, show_default=True,
              help="Paths under site-packages whose arcs are coverage (repeatable), e.g. torch/fx; "
                   f"{DYNAMO_SIGNALS}: Dynamo's own signals (the kinds of values a trace built, the "
                   "instructions it stepped on them, the guards it installed).")
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
@click.option("--sync-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Share a campaign with other instances (AFL's -M/-S): this one owns SYNC_DIR/NAME and takes "
                   "its peers' entries that add features, and their findings' signatures.")
@click.option("--name", "instance", default=None, help="This instance's name in --sync-dir (its directory).")
@click.option("--sync-every", type=Duration(), default=SYNC_EVERY, show_default=True,
              help="Seconds (or 2m, ...) between looks at the peers in --sync-dir (there is one after the dry run "
                   "and one before stopping too).")
@click.option("--known", "known_paths", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="Bugs filed before (repeatable): a campaign directory, a findings folder, a finding directory or "
                   "a folder of reproducer .py files. Hits of their signatures are counted in known.json, not filed; "
                   "a finding that reduces to one of their programs is marked known. A resumed campaign keeps the "
                   "ones it had.")
@click.option("--confirm-on", "confirm_on", multiple=True, type=click.Path(dir_okay=False), metavar="PATH",
              callback=absolute_interpreters,
              help="Judge each new frontend finding on the torch of this Python interpreter too (repeatable; one "
                   "worker each), once reduced: finding.json's versions and the summary say what is live on the "
                   "newest torch, fixed since, a regression or changed (as mutate versions does).")
@click.option("--no-splice", is_flag=True,
              help="Leave out family S, the splices of two queue entries (to measure what they add).")
@click.option("--max-stack", type=click.IntRange(min=1, max=16), default=3, show_default=True,
              help="Operators stacked in one mutant at most (1 to N, fewer likelier).")
@click.option("--no-feedback", is_flag=True,
              help="Keep no mutant for its features and learn nothing from them: the unguided baseline that "
                   "bench/yield.py measures guidance against (with --schedule uniform).")
@configurations_option(CAMPAIGN_CONFIGURATIONS)
@click.option("--sweep-share", type=click.FloatRange(min=0.0, max=1.0), default=SWEEP_SHARE, show_default=True,
              help="At most this share of the checks sweeps queue entries, as they are, under the configurations they "
                   "were not checked under (0: none; mutants still take every configuration).")
@click.option("--arc-share", type=click.FloatRange(min=0.0, max=1.0), default=ARC_SHARE, show_default=True,
              help="The share of the mutants' and sweeps' compiled runs that record arcs where the workers trace them "
                   "with coverage.py (Python 3.10, 3.11: a traced compile takes about 1.7 times as long); the others "
                   "are guided by Dynamo's signals alone (1: every run records them). With sys.monitoring (Python "
                   "3.12+) every run records them.")
@click.option("--no-rejudge-known", is_flag=True,
              help="Know the bugs of --known only by what they were filed under, without judging their programs on "
                   "this torch first (where a crash site moved between releases, the bug then looks new).")
@click.option("--confirm-known", is_flag=True,
              help="Confirm hits of bugs filed before (--known) like any bug verdict, although they are only counted "
                   "(to measure what leaving them unconfirmed saves).")
@click.option("--no-avoid-known", is_flag=True,
              help="Give queue entries whose mutants keep hitting known bugs (--known, or filed here many times) "
                   "their full energy anyway (to measure what avoiding them adds).")
@ray_option
@python_option
@run_options
@click.pass_context
def fuzz(ctx: click.Context, corpus_dirs: tuple[str, ...], out: Path, duration: float | None, max_execs: int | None,
         schedule: str, seed: int | None, resume: bool, no_ui: bool, coverage_include: tuple[str, ...], no_reduce: bool,
         reduce_share: float, no_repair: bool, no_llm: bool, llm_model: str | None, llm_budget_calls: int | None,
         llm_budget_tokens: int | None, sync_dir: Path | None, instance: str | None, sync_every: float,
         known_paths: tuple[Path, ...], confirm_on: tuple[str, ...], no_splice: bool, no_feedback: bool,
         max_stack: int, configurations: tuple[str, ...], sweep_share: float, arc_share: float, no_rejudge_known: bool,
         confirm_known: bool,
         no_avoid_known: bool,
         ray_address: str | None,
         python: str | None, backend: str, timeout: float, memory_mb: int, jobs: int | None, no_sandbox: bool) -> None:
    """Fuzz torch.compile: mutate the corpus, keep what reaches new Dynamo code, file findings.

    Invalid mutants are repaired by rules; with an LLM endpoint in the environment
    (OPENAI_BASE_URL for a local OpenAI-compatible server, OPENAI_API_KEY for OpenAI) also
    by the LLM, which then writes mutants of its own too (family L). With --ray the
    workers are Ray actors; with --sync-dir and --name, instances on any number of
    machines share what they find."""
    out = _instance_out(ctx, out, sync_dir, instance)
    known_bugs = _known_bugs(out, known_paths)  # before anything is written: a wrong path is a usage error
    try:
        if resume:
            _refuse_changed_options(ctx, out)
            campaign = Campaign.resume(out)
        else:
            if not corpus_dirs:
                raise click.UsageError("--corpus is required to start a campaign (or --resume one)")
            if seed is None:
                seed = chosen_seed(instance)
                click.echo(f"seed: {seed} (from {'the name ' + instance if instance else 'the clock'}; --seed {seed} "
                           "starts this campaign again)", err=True)
            campaign = Campaign.create(out, CampaignConfig(
                corpus=tuple(corpus_dirs), backend=backend, schedule=schedule, seed=seed, timeout=timeout,
                memory_mb=memory_mb, coverage=tuple(coverage_include), splice=not no_splice,
                feedback=not no_feedback, max_stack=max_stack, configurations=configurations,
                avoid_known=not no_avoid_known, sweep_share=sweep_share, arc_share=arc_share))
        llm_config = _llm_config(campaign, no_llm=no_llm, model=llm_model, budget_calls=llm_budget_calls,
                                 budget_tokens=llm_budget_tokens)
    except (CampaignError, StorageError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    known = KnownHits(campaign.root, known_bugs) if known_bugs is not None else None
    named = ctx.get_parameter_source("configurations") is click.core.ParameterSource.COMMANDLINE
    if resume and named and configurations != campaign.config.configurations:  # a resumed campaign may change them
        campaign.save_config(dataclasses.replace(campaign.config, configurations=configurations))
    config = campaign.config
    seeds: list = []
    suites = [path for path in config.corpus if is_suite(path)] if not resume else []  # test folders: harvested
    if not resume:
        plain = [path for path in config.corpus if path not in suites]
        seeds, errors = load_programs(plain) if plain else ([], [])
        for error in errors:
            click.echo(f"error: {error}", err=True)
        if not seeds and not suites:
            click.echo("error: no seed programs in " + ", ".join(config.corpus), err=True)
            sys.exit(EXIT_USAGE)
    run = run_config(backend=config.backend, timeout=config.timeout, memory_mb=config.memory_mb,
                     no_sandbox=no_sandbox)
    console = Console(stderr=True)
    python = python or config.python  # a resumed campaign runs its workers where it did
    with open_executor(jobs=jobs, config=run, coverage=config.coverage, ray_address=ray_address, python=python) as pool, \
            contextlib.ExitStack() as others:
        try:
            pool.wait_ready()
            _refuse_other_torch(campaign, pool.build)
        except ExecutorError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
        if newer := remind(pool.build, TorchIndex.from_env()):  # a newer torch is out: once a day, never an error
            click.echo(newer, err=True)
        torch_version = pool.build.describe()
        offered = offered_configurations(pool, config.configurations, strict=named)
        campaign.save_config(config := dataclasses.replace(config, sandbox=pool.sandbox(), torch=pool.build.as_json(),
                                                           python=python, driver=Build.driver().as_json(),
                                                           tracer=pool.tracer))
        if known is not None:
            click.echo(f"known: {len(known.known.signatures)} signatures and {len(known.known.digests)} reduced "
                       f"programs filed before, from {', '.join(known.known.sources)}", err=True)
            if not no_rejudge_known:
                _rejudge_known(known.known, pool, backend=config.backend, offered=offered)
        sync = SyncLane(Sync(campaign, every=sync_every)) if sync_dir is not None else None
        reduction = None if no_reduce else ReductionLane(BackgroundReduction(
            pool, campaign.root, workers=pool.size, config=run, torch_version=torch_version, max_share=reduce_share,
            python=python or sys.executable))
        confirm = _confirm_lane(pool, confirm_on, others, config=run, reducing=reduction is not None)
        lanes = [*_repair_and_llm_lanes(llm_config, campaign, no_repair=no_repair, no_llm=no_llm),
                 *(lane for lane in (sync, reduction, confirm) if lane is not None)]
        fuzzer = build_fuzzer(campaign, pool, torch_version, lanes=lanes, known=known, configurations=offered,
                              confirm_known=confirm_known)
        fuzzer.cpu.add(WARM_UP, sum(ready.warmup_seconds for ready in pool.ready))  # mostly CPU: imports, compiles
        if resume:  # a dry run a kill cut short: its unchecked seeds, less those the queue holds already
            queued = {entry.program.digest for entry in fuzzer.corpus.entries}
            seeds = [program for program in campaign.load_dry_run() if program.digest not in queued]
            if seeds:
                click.echo(f"resume: the dry run had {len(seeds)} seeds left to check; checking them first", err=True)
        for problem in [*campaign.problems, *fuzzer.store.unreadable]:
            click.echo(f"warning: {problem}", err=True)
        workers = f"{pool.size} Ray actors" if ray_address is not None else f"{pool.size} workers"
        traced = f", coverage: {config.tracer}" if config.tracer else ""
        title = (f"mutate fuzz: {campaign.root} ({config.backend} backend, {config.schedule} schedule, {workers}, "
                 f"sandbox: {config.sandbox}{traced})")
        show = StatusLines() if no_ui or not console.is_terminal else LiveScreen(console, title)
        interrupts = _GracefulStop(fuzzer)
        started, unwritable = time.monotonic(), False
        if suites:
            seeds += _harvest_suites(fuzzer, pool, suites, run=run, torch_version=torch_version)
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
        except OSError as exc:  # the disk is full, or gone: stop; every file written before is whole
            click.echo(f"error: {_write_failure(exc, campaign)}", err=True)
            unwritable = True
        finally:
            try:
                fuzzer.stop()  # each lane finishes (a last look at the peers, the reductions done), then all is saved
            except OSError as exc:
                if not unwritable:
                    click.echo(f"error: {_write_failure(exc, campaign)}", err=True)
                unwritable = True
            campaign.close()
    _print_summary(fuzzer, reduction=reduction, sync=sync, confirm=confirm)
    if unwritable:
        sys.exit(EXIT_USAGE)


def _instance_out(ctx: click.Context, out: Path, sync_dir: Path | None, instance: str | None) -> Path:
    """The campaign directory: --out, or SYNC_DIR/NAME for an instance of a synced campaign."""
    if sync_dir is None:
        if instance is not None:
            raise click.UsageError("--name names an instance of --sync-dir; give both, or neither")
        return out
    if instance is None:
        raise click.UsageError("--sync-dir needs --name: this instance's directory in it")
    if ctx.get_parameter_source("out") is click.core.ParameterSource.COMMANDLINE:
        raise click.UsageError("--out and --sync-dir: an instance's campaign directory is SYNC_DIR/NAME; give one")
    try:
        return instance_directory(sync_dir, instance)
    except SyncError as exc:
        raise click.UsageError(str(exc)) from None


def _known_bugs(out: Path, paths: tuple[Path, ...]) -> KnownBugs | None:
    """The bugs filed before, from --known, else from what an earlier session of the
    campaign in `out` used (its known.json); never the campaign itself."""
    previous = [p for p in KnownHits.sources_of(out) if p.exists()]
    chosen = [p for p in (list(paths) or previous) if p.resolve() != out.resolve()]
    if not chosen:
        return None
    try:
        bugs = KnownBugs.load(chosen)
    except KnownError as exc:
        raise click.BadParameter(str(exc), param_hint="--known") from None
    for problem in bugs.problems:
        click.echo(f"warning: {problem}", err=True)
    return bugs


def _rejudge_known(known: KnownBugs, pool, *, backend: str, offered: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    """The known bugs' programs judged on this torch (cached), so that a bug whose signature
    moved since it was filed is known by the one it shows here too."""
    todo = [p for p in known.programs if p.configuration in offered]
    if not todo:
        return
    with progress(None, f"judging the {len(todo)} programs of the known bugs on {pool.build.describe()}") as bar:
        added = known.rejudge(Checker(pool, config=untraced(pool.config)), pool.build, backend=backend, offered=offered,
                              progress=lambda done, total: bar.advance())
    click.echo(f"known: their {len(todo)} programs judged on this torch show {added} signatures they were not filed "
               "under; those are known too", err=True)


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


def _repair_and_llm_lanes(config, campaign: Campaign, *, no_repair: bool,  # type: ignore[no-untyped-def]
                          no_llm: bool) -> list[Lane]:
    """Repair (the rules, then the LLM's) and family L, beside the loop; what the LLM does is
    said once either way."""
    if config is None:
        why = "(--no-llm)" if no_llm else ("set OPENAI_BASE_URL (a local OpenAI-compatible server) or "
                                          "OPENAI_API_KEY (OpenAI) to turn them on")
        click.echo(f"LLM repair and family L are off: {why}" + ("" if no_repair else "; rules still repair"),
                   err=True)
        return [] if no_repair else [RepairLane()]
    from mutator.llm import LLM
    from mutator.llm.lane import LLMLane
    from mutator.llm.rewrite import LLMMutation
    from mutator.repair.llm import LLMRepairer

    llm = LLM(config, campaign.root / "llm-cache")
    answers = LLMAnswers(LLMLane(llm))
    click.echo(f"LLM: {config.describe()}: " + ("" if no_repair else "repairs invalid mutants and ")
               + "writes mutants of family L", err=True)
    repair = [] if no_repair else [RepairLane(llm=answers, repairer=LLMRepairer(llm))]
    return [*repair, LLMMutationLane(answers, LLMMutation(llm))]


def build_fuzzer(campaign: Campaign, executor, torch_version: str, *, checker=None,  # type: ignore[no-untyped-def]
                 lanes: Sequence[Lane] = (), known: KnownHits | None = None,
                 configurations: tuple[str, ...] | None = None, confirm_known: bool = False) -> Fuzzer:
    """The loop of a campaign directory (new or resumed) on `executor`, with `lanes` beside it:
    its corpus, coverage, findings and statistics as on disk, checks through `checker`
    (default: a `Checker` of the executor; the benches pass a stand-in), two checks in
    flight per worker, under `configurations` (default: the campaign's)."""
    config = campaign.config
    corpus, coverage = Corpus(), campaign.load_coverage()
    for entry in campaign.load_entries():
        corpus.add(entry)
        coverage.include(entry.features)
    store = FindingStore(campaign.root, torch_version=torch_version, backend=config.backend, lazy=True)
    filing = Filing(store, known)
    # a hit of a bug filed before is only counted: its confirmation would buy nothing
    # and a hit under a configuration whose signature is another configuration's bug is checked
    # under the defaults: needing its configuration, it is a bug of its own
    checker = checker or Checker(executor, count_only=filing.counts_as_known
                                 if known is not None and not confirm_known else None, taken=filing.taken,
                                 same_bug=filing.same_bug)
    fuzzer = Fuzzer(
        corpus=corpus, coverage=coverage,
        mutator=Mutator(all_operators(), max_stack=config.max_stack, splice=config.splice),
        schedule=SCHEDULES[config.schedule](avoid_known=config.avoid_known), checker=checker,
        filing=filing, campaign=campaign, lanes=lanes, rng=random.Random(config.seed),
        inflight=2 * executor.size, feedback=config.feedback, health=executor.health,
        configurations=ConfigurationSchedule(configurations or config.configurations, feedback=config.feedback,
                                             sweep_share=config.sweep_share),
        # sys.monitoring records arcs for about a tenth of a compile: sampling them would buy nothing
        arc_share=1.0 if getattr(executor, "tracer", "") == MONITORING_TRACER else config.arc_share,
    )
    fuzzer.restore(campaign.load_stats())
    fuzzer.rng = random.Random(f"{config.seed}/{fuzzer.stats.execs}")  # a resumed session does not replay
    return fuzzer


def _refuse_other_torch(campaign: Campaign, build: Build) -> None:
    """A resumed campaign's coverage map and findings are of the torch it began on: another
    torch in the workers is a new campaign, not a session of this one."""
    began = Build.from_json(campaign.config.torch) if campaign.config.torch else None
    if began is not None and (began.torch, began.git) != (build.torch, build.git):
        raise ExecutorError(f"{campaign.root} was fuzzed on {began.describe()} ({began.executable}); these workers "
                            f"run {build.describe()} ({build.executable}): resume with --python {began.executable}, "
                            "or start a new campaign with another --out")


def _refuse_changed_options(ctx: click.Context, out: Path) -> None:
    explicit = [name for name in CAMPAIGN_OPTIONS
                if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE]
    if explicit and (out / "campaign.json").exists():
        stored = json.loads((out / "campaign.json").read_text())
        key = {"corpus_dirs": "corpus", "coverage_include": "coverage"}
        # the --no-* flags are stored the other way round ("splice": true), absent in older campaigns: on
        stored.update({f"no_{name}": not stored.get(name, True) for name in ("splice", "feedback", "avoid_known")})
        changed = [n for n in explicit if _as_stored(n, ctx.params[n]) != _as_stored(n, stored.get(key.get(n, n)))]
        if changed:
            names = ", ".join("--" + n.replace("_dirs", "").replace("_", "-") for n in changed)
            raise click.UsageError(f"{names}: a resumed campaign keeps the settings in {out}/campaign.json")


def _as_stored(name: str, value):  # type: ignore[no-untyped-def]
    if name == "corpus_dirs":
        return [os.path.normpath(v) for v in value]
    return list(value) if isinstance(value, (tuple, list)) else value


def _write_failure(exc: OSError, campaign: Campaign) -> str:
    where = exc.filename or campaign.root
    return (f"{where}: {exc.strerror or exc}; the campaign stopped with every file written before "
            f"it whole: free space and continue with --resume --out {campaign.root}")


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


def _harvest_suites(fuzzer: Fuzzer, pool, suites: list[str], *, run: RunConfig,  # type: ignore[no-untyped-def]
                    torch_version: str) -> list:
    """The test folders among the corpus paths, harvested (`mutator.campaign.suite`): what
    passed enters the queue with its features, what already fails is returned for the dry run."""
    from mutator.harvest.collection import Collector

    harvest = SuiteHarvest(harvester_factory(Checker(pool), Collector(pool.submit, run).collect,
                                             torch_version=torch_version, workers=pool.size, backend=run.backend),
                           build=pool.build, coverage=fuzzer.campaign.config.coverage)
    bars: dict[str, list] = {}  # what -> [bar, steps shown]
    with contextlib.ExitStack() as stack:
        def show(what: str, done: int, total: int) -> None:
            if what not in bars:
                bars[what] = [stack.enter_context(progress(total, f"harvesting {', '.join(suites)}: {what}")), 0]
            bar, shown = bars[what]
            bar.advance(done - shown)
            bars[what][1] = done

        found = harvest.seeds(suites, progress=show)
    for failed in found.report.collection_errors:
        click.echo(f"warning: {failed['file']}: cannot be imported ({failed['error']}); its tests were read from "
                   "its text", err=True)
    click.echo(f"harvested {', '.join(suites)}: {found.describe()}", err=True)
    fuzzer.admit((entry.program, entry.features, entry.seconds, entry.path.name) for entry in found.checked)
    return found.to_check


def _confirm_lane(pool, pythons: tuple[str, ...], others: contextlib.ExitStack, *,  # type: ignore[no-untyped-def]
                  config: RunConfig, reducing: bool) -> ConfirmLane | None:
    """The lane judging new findings on the campaign's torch and on each of `pythons` (a pool
    of one worker each, closed with `others`); None without --confirm-on."""
    if not pythons:
        return None
    torches = [Torch(pool.build.executable or sys.executable, pool, pool.build)]
    try:
        for python in pythons:
            other = others.enter_context(WorkerPool(workers=1, config=config, python=python))
            other.wait_ready()
            torches.append(Torch(python, other, other.build))
    except ExecutorError as exc:
        click.echo(f"error: --confirm-on: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo("confirming new findings on " + "; ".join(t.build.describe() for t in torches[1:]), err=True)
    return ConfirmLane(VersionJudge(torches), [t.build for t in torches], reducing=reducing)


def _print_summary(fuzzer: Fuzzer, *, reduction: ReductionLane | None, sync: SyncLane | None,
                   confirm: ConfirmLane | None) -> None:
    snapshot = fuzzer.snapshot()
    click.echo(status_line(snapshot))
    for line in finding_lines(fuzzer.store.findings.values(), fuzzer.campaign.root):
        click.echo(line)
    if fuzzer.set_aside:
        click.echo(f"  {len(fuzzer.set_aside)} seeds set aside (see {fuzzer.campaign.root / 'set_aside.json'})")
    if reduction is not None:
        unreduced = sum(1 for f in fuzzer.store.findings.values() if not f.reduction)
        click.echo(f"  {fuzzer.stats.reduced} findings reduced in the background, {fuzzer.stats.merged} merged"
                   + (f"; {unreduced} not reduced yet (next session, or mutate reduce "
                      f"{fuzzer.campaign.root}/findings/*)" if unreduced else ""))
        if fuzzer.stats.reduce_failed:
            click.echo(f"  {fuzzer.stats.reduce_failed} reductions failed; the last: {fuzzer.stats.last_reduce_error}")
    for line in origin_lines(snapshot):
        click.echo("  " + line)
    known = fuzzer.filing.known
    if known is not None:
        marked = sum(1 for f in fuzzer.store.findings.values() if f.known)
        click.echo(f"  known: {known.total} hits of {len(known.hits)} signatures filed before, not filed again "
                   f"(see {known.path})" + (f"; {marked} findings reduced to a program filed before" if marked else ""))
    if sync is not None:
        stats = sync.sync.stats
        peers = f"; peers skipped (another coverage configuration): {', '.join(stats.skipped_peers)}" \
            if stats.skipped_peers else ""
        click.echo(f"  sync: {stats.imported} entries taken from peers in {stats.rounds} rounds, "
                   f"{stats.known_signatures} of their signatures known{peers}")
    if confirm is not None:
        click.echo("  " + describe_versions(fuzzer.campaign.root, status_counts(list(fuzzer.store.findings.values())),
                                            confirm.newest.torch))
        if confirm.last_error:
            click.echo(f"  confirming failed once: {confirm.last_error}")
