"""`mutate generate`: new seed programs for one taxonomy class, written by an LLM."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from mutator.judge.check import Checker
from mutator.commands.common import EXIT_USAGE, run_config, run_options, summary_json_option
from mutator.commands.progress import progress
from mutator.exec.pool import PoolError, WorkerPool
from mutator.findings.store import FindingStore
from mutator.core.program import ProgramError
from mutator.core.storage import StorageError

SEEDS = Path(__file__).resolve().parents[2] / "seeds"  # the repository's own, for the prompts to steer away from


@click.command()
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
@summary_json_option
def generate(family: str, count: int, out: Path | None, campaign_dir: Path | None, llm_model: str | None,
             llm_budget_calls: int | None, llm_budget_tokens: int | None, backend: str, timeout: float,
             memory_mb: int, jobs: int | None, no_sandbox: bool, as_json: bool) -> None:
    """New seed programs for one taxonomy class, written by an LLM and checked through the pool.

    The endpoint comes from the environment: OPENAI_BASE_URL (a local OpenAI-compatible
    server) and/or OPENAI_API_KEY. Valid new programs go to --out with a provenance
    header, duplicates (same text or coverage) are dropped, programs that already fail
    under torch.compile are filed in --out/findings/. Exit status: 0, or 2 for usage
    errors and when the LLM answered no request at all.
    """
    from mutator.harvest.generate import Generator, seed_summaries, siblings_from_findings
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
    avoid = seed_summaries(SEEDS, cls.code)
    config = run_config(backend=backend, timeout=timeout, memory_mb=memory_mb, no_sandbox=no_sandbox)
    try:
        with LLM(llm_config, out / ".llm-cache") as llm, \
                WorkerPool(workers=jobs, config=config, coverage=("torch/_dynamo",)) as pool:
            pool.wait_ready()
            torch_version = pool.build.describe()
            generator = Generator(llm, Checker(pool).check, FindingStore(out, torch_version=torch_version,
                                                                         backend=backend),
                                  out, torch_version=torch_version, workers=pool.size)
            with progress(count, f"generating {cls.code}", enabled=not as_json) as bar:
                report = generator.generate(cls, count, siblings_of=siblings, avoid=avoid, progress=bar.advance)
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
