"""The command line's layout: one module of mutator.commands per command, registered on cli.main."""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import click

import cli
import mutator.commands


ROOT = Path(__file__).resolve().parents[3]
MODULE_OF = {"mutate": "ops"}  # `mutate mutate` lives beside `mutate ops`, the other operator-facing command
SHARED = {"common", "progress"}


def test_every_listed_command_is_a_module_of_mutator_commands_registered_on_main():
    help_text = subprocess.run([sys.executable, str(ROOT / "cli.py"), "--help"], capture_output=True, text=True,
                               check=True, cwd=ROOT).stdout
    listed = re.findall(r"^  (\S+)  ", help_text.split("Commands:", 1)[1], flags=re.MULTILINE)
    assert listed == sorted(cli.main.commands)
    modules = set()
    for name in listed:
        module = importlib.import_module(f"mutator.commands.{MODULE_OF.get(name, name)}")
        defined = [c for c in vars(module).values() if isinstance(c, click.Command) and c.name == name]
        assert defined == [cli.main.commands[name]], f"mutate {name}: not the command of {module.__name__}"
        modules.add(module.__name__.rsplit(".", 1)[1])
    assert {m.name for m in pkgutil.iter_modules(mutator.commands.__path__)} == modules | SHARED
