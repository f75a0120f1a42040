"""The command line's layout (one module of mutator.commands per command, registered on
cli.main) and batch progress where stderr is no terminal."""

from __future__ import annotations

import importlib
import io
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import click

import cli
import mutator.commands
from mutator.commands.progress import progress

ROOT = Path(__file__).resolve().parents[2]
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


def test_progress_writes_tqdm_lines_to_a_stream_that_is_no_terminal():
    log = io.StringIO()
    with progress(3, "checking", stream=log) as bar:
        for _ in range(3):
            bar.advance()
    text = log.getvalue()
    assert "checking" in text and "3/3" in text
    assert "\r" not in text and text.endswith("\n")  # one line per redraw, as a log keeps them


def test_progress_goes_to_stderr_and_is_silent_when_disabled(monkeypatch):
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    with progress(2, "validating", enabled=False) as bar:
        bar.advance(2)
    assert stderr.getvalue() == ""
    with progress(2, "validating") as bar:
        bar.advance(2)
    assert "validating" in stderr.getvalue() and "2/2" in stderr.getvalue()
