"""What several `mutate` commands share: the exit statuses, the options of every command
that runs programs, those of the commands that write a corpus (`--coverage-include`, a
summary `--json`), the executor they run on (`--ray`), and the duration parameter of
`mutate fuzz --time`."""

from __future__ import annotations

import os
import re
import sys
from typing import Any

import click

from mutator.core.configurations import CONFIGURATIONS, DEFAULT, ConfigurationError, configuration, parse_names
from mutator.core.observation import RunConfig

EXIT_FINDINGS = 1
EXIT_USAGE = 2


def run_options(f):  # type: ignore[no-untyped-def]
    """Options shared by every command that runs programs."""
    f = click.option("--backend", type=click.Choice(["eager", "aot_eager", "inductor"]), default="eager",
                     show_default=True, help="Backend for every torch.compile whose backend is a string or unset.")(f)
    f = click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
                     help="Seconds of wall clock per run before it counts as a hang.")(f)
    f = click.option("--memory-mb", type=click.IntRange(min=64), default=4096, show_default=True,
                     help="Memory a run may allocate beyond the warm worker's own.")(f)
    f = click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
                     help="Worker processes (default: one per core; with --ray, the cluster's CPUs).")(f)
    f = click.option("--no-sandbox", is_flag=True,
                     help="Run programs unconfined: they may then write anywhere the user may, connect over "
                          "TCP and signal any of the user's processes (credentials still leave the "
                          "environment, and the limits stay).")(f)
    return f


def coverage_option(purpose: str):  # type: ignore[no-untyped-def]
    """`--coverage-include`: the paths under site-packages whose arcs are a program's features,
    `purpose` saying what the command uses them for."""
    return click.option("--coverage-include", multiple=True, default=("torch/_dynamo",), show_default=True,
                        help=f"Paths under site-packages whose arcs {purpose} (repeatable).")


def summary_json_option(f):  # type: ignore[no-untyped-def]
    """`--json`: the command's summary as one JSON object."""
    return click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")(f)


def run_config(*, backend: str, timeout: float, memory_mb: int, no_sandbox: bool,
               configuration: str = DEFAULT) -> RunConfig:
    """The RunConfig of `run_options` (and of `--config`)."""
    return RunConfig(backend=backend, timeout=timeout, memory_mb=memory_mb, sandbox="off" if no_sandbox else "on",
                     configuration=configuration)


def config_option(f):  # type: ignore[no-untyped-def]
    """`--config NAME`: the Dynamo configuration every compiled run takes (`mutator.core.configurations`)."""
    return click.option("--config", "configuration", default=DEFAULT, show_default=True, metavar="NAME",
                        callback=_one_configuration,
                        help="Judge under this Dynamo configuration (the compiled runs only): "
                             + ", ".join(CONFIGURATIONS) + ".")(f)


def _one_configuration(ctx: click.Context, param: click.Parameter, value: str) -> str:
    try:
        return configuration(value).name
    except ConfigurationError as exc:
        raise click.BadParameter(str(exc)) from None


def configurations_option(default: tuple[str, ...]):  # type: ignore[no-untyped-def]
    """`--configs NAME[,NAME...]` (or `all`): the Dynamo configurations a campaign checks under."""
    return click.option("--configs", "configurations", default=",".join(default), show_default=True,
                        metavar="NAME[,NAME...]", callback=_configurations,
                        help="The Dynamo configurations checks take, one per check, chosen by what each finds (the "
                             "compiled runs only; the eager run is the reference): " + ", ".join(CONFIGURATIONS)
                             + ", or all.")


def _configurations(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
    try:
        return parse_names(value)
    except ConfigurationError as exc:
        raise click.BadParameter(str(exc)) from None


def offered_configurations(executor: Any, names: tuple[str, ...], *, strict: bool) -> tuple[str, ...]:
    """The configurations of `names` the executor's torch has. One it lacks ends the command
    with a one-line error when `strict` (a configuration asked for by name), else it is left
    out with a note (a newer torch may drop an entry); none left is an error either way."""
    have = executor.configurations
    lacking = [name for name in names if name not in have]
    build = executor.build.describe()
    if lacking and (strict or len(lacking) == len(names)):
        missing = "; ".join(f"{name} needs {', '.join(n for n, _ in CONFIGURATIONS[name].settings)}"
                            for name in lacking)
        click.echo(f"error: {build} does not have what the configuration asks for ({missing}); the configurations "
                   f"it has: {', '.join(have)}", err=True)
        sys.exit(EXIT_USAGE)
    for name in lacking:
        click.echo(f"note: configuration {name} left out: {build} has no "
                   f"{', '.join(n for n, _ in CONFIGURATIONS[name].settings)}", err=True)
    return tuple(name for name in names if name in have)


def absolute_interpreters(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """An interpreter option's paths made absolute, not resolved: a venv's python is a symlink
    whose target would leave the venv, and a relative path would name another file for a
    reproducer run in its finding's directory or a campaign resumed from elsewhere."""
    if value is None:
        return None
    if isinstance(value, tuple):
        return tuple(os.path.abspath(path) for path in value)
    return os.path.abspath(value)


def python_option(f):  # type: ignore[no-untyped-def]
    """`--python PATH`: the workers' interpreter, so that the torch under test can be another
    environment's (a nightly's venv, a source build) than the driver's."""
    return click.option("--python", "python", type=click.Path(dir_okay=False), default=None, metavar="PATH",
                        callback=absolute_interpreters,
                        help="Run the workers with this Python interpreter (its torch is the one under test; it "
                             "needs this package's dependencies: pip install -e THIS_REPO there). Default: this "
                             "command's own interpreter.")(f)


LOCAL_RAY = "local"


def ray_option(f):  # type: ignore[no-untyped-def]
    """`--ray [ADDRESS]`: run on Ray actors instead of local workers."""
    return click.option("--ray", "ray_address", is_flag=False, flag_value=LOCAL_RAY, default=None,
                        metavar="[ADDRESS]",
                        help="Run the workers as Ray actors: alone, on a local Ray instance (or the cluster "
                             "RAY_ADDRESS names); with an address (ray://head:10001, auto), on that cluster. "
                             "Needs pip install 'mutator[ray]'.")(f)


def open_executor(*, jobs: int | None, config: RunConfig, coverage: tuple[str, ...] = (),
                  ray_address: str | None = None, python: str | None = None) -> Any:
    """The executor of a command: the local pool, or Ray actors with `--ray`, their workers
    run by `python` (default: this interpreter). A Ray that is missing or unreachable, or an
    interpreter that cannot run the workers, ends the command with a one-line error."""
    from mutator.exec import ExecutorError

    try:
        if ray_address is None:
            from mutator.exec.pool import WorkerPool

            return WorkerPool(workers=jobs, config=config, coverage=coverage, python=python or sys.executable)
        from mutator.exec.ray import RayExecutor

        return RayExecutor(address=None if ray_address == LOCAL_RAY else ray_address, workers=jobs, config=config,
                           coverage=coverage, python=python)
    except ExecutorError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)


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
