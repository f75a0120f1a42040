"""What several `mutate` commands share: the exit statuses, the options of every command
that runs programs, and the duration parameter of `mutate fuzz --time`."""

from __future__ import annotations

import re

import click

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
                     help="Worker processes (default: one per core).")(f)
    return f


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
