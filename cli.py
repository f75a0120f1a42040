"""The `mutate` command line: the click group. Each command is a module of mutator/commands/,
the only place where the parts are wired together."""

from __future__ import annotations

import click

from mutator.commands.fuzz import fuzz
from mutator.commands.generate import generate
from mutator.commands.harvest import harvest
from mutator.commands.minimize import minimize
from mutator.commands.ops import mutate_command, ops
from mutator.commands.plot import plot
from mutator.commands.reduce import reduce
from mutator.commands.report import report
from mutator.commands.run import run
from mutator.commands.versions import versions


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """mutator: a mutation-based, coverage-guided fuzzer for TorchDynamo (torch.compile)."""


for command in (run, fuzz, harvest, generate, minimize, reduce, report, versions, plot, ops, mutate_command):
    main.add_command(command)


if __name__ == "__main__":
    main()
