"""The compiler configuration a program changes, as its reproducer must set it again.

A program may set `torch._dynamo.config` (or `torch._inductor.config`) entries itself: at
import, in a set-up function its drive calls, in a harvested test's `setUp`, through
`config.patch(...)`. A finding may show only under that configuration, so each compiled
call records the entries that differ from what they were when the run began (the warm
worker's own settings, `compile_threads` say, are not the program's and are left out).
Only values whose `repr` reads back as an equal literal are kept: a reproducer writes
them as `torch._dynamo.config.<name> = <repr>`.

The changes die with the run: each run is a forked child of the warm worker. So do the
settings of the configuration a compiled run takes (`mutator.core.configurations`), which
`apply` makes before the program starts: they are the run's, not the program's, and the
watch starts after them.
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from mutator.core.configurations import CONFIGURATIONS, Configuration

MODULES = ("torch._dynamo.config", "torch._inductor.config")
Changes = tuple[tuple[str, str], ...]  # ("torch._dynamo.config.capture_scalar_outputs", "True"), sorted


class ConfigWatch:
    """What the configuration modules hold at the start of a run, to say later what changed."""

    def __init__(self) -> None:
        self._start = {name: _values(name) for name in MODULES}

    def changes(self) -> Changes:
        """The entries that now differ from the start of the run, as (dotted name, repr)."""
        found: list[tuple[str, str]] = []
        for name in MODULES:
            now = _values(name)
            start = self._start.get(name) or _defaults(name)  # imported by the program: from its defaults
            for key, value in now.items():
                if key in start and _equal(value, start[key]):
                    continue
                text = _literal(value)
                if text is not None:
                    found.append((f"{name}.{key}", text))
        return tuple(sorted(found))


def apply(configuration: Configuration) -> None:
    """Set the configuration's entries (in this run's process: it dies with the run)."""
    import importlib

    for name, value in configuration.settings:
        module, key = name.rsplit(".", 1)
        setattr(importlib.import_module(module), key, ast.literal_eval(value))


def available() -> tuple[str, ...]:
    """The configurations this torch has every entry of (a newer torch may drop one, an older
    one lack it), in CONFIGURATIONS' order."""
    return tuple(name for name, configuration in CONFIGURATIONS.items() if not missing(configuration))


def missing(configuration: Configuration) -> tuple[str, ...]:
    """The configuration's entries this torch does not have."""
    import importlib

    absent = []
    for name, _ in configuration.settings:
        module, key = name.rsplit(".", 1)
        try:
            entries = getattr(importlib.import_module(module), "_config", None)
        except ImportError:
            entries = None
        if entries is None or key not in entries:
            absent.append(name)
    return tuple(absent)


def unavailable() -> tuple[str, ...]:
    """The configuration modules this torch cannot be read from (no `_get_dict`): what a
    program sets there is not recorded, so its reproducer would not set it again."""
    import importlib

    return tuple(f"{name}._get_dict" for name in MODULES
                 if not callable(getattr(importlib.import_module(name), "_get_dict", None)))


def _values(name: str) -> dict[str, Any]:
    module = sys.modules.get(name)
    get_dict = getattr(module, "_get_dict", None)
    if get_dict is None:
        return {}
    # readonly_values: cached between calls and recomputed only for the entries set since
    return get_dict(readonly_values=True)


def _defaults(name: str) -> dict[str, Any]:
    entries = getattr(sys.modules.get(name), "_config", {})
    return {key: entry.default for key, entry in entries.items()}


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # a value of the program's that compares oddly: call it changed
        return False


def _literal(value: Any) -> str | None:
    """repr(value) when it reads back as an equal literal (bool, number, str, None, containers of them)."""
    text = repr(value)
    try:
        return text if _equal(ast.literal_eval(text), value) else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
