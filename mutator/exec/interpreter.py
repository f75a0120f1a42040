"""Whether another interpreter (`--python PATH`) can run this package's workers.

The driver and the torch under test may live in different environments: a nightly's venv,
a source build, the newest release beside the one the driver was installed with. The
workers there import this very copy of the package (on `PYTHONPATH`, as the pool starts
them) and need its dependencies and torch installed there. Asked before any worker starts,
without importing torch (a second or less), so that a missing piece is one line that says
what to install, not a worker's traceback after its warm-up.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from mutator.exec import ExecutorError

# what a worker imports: torch, and this package's own dependencies on the worker side
NEEDED = ("torch", "numpy", "libcst", "coverage")
_PROBE = r"""
import importlib.util, json, sys
missing = [name for name in NEEDED if importlib.util.find_spec(name) is None]
error = ""
if not missing:
    try:
        import mutator.exec.worker  # noqa: F401  (imports no torch)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
print(json.dumps({"missing": missing, "error": error, "python": sys.version.split()[0]}))
"""


class InterpreterError(ExecutorError):
    """The interpreter given cannot run the workers; the message says what to install."""


def package_root() -> str:
    """The directory that holds this package: what the workers' `PYTHONPATH` starts with."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def check_interpreter(python: str, env: dict[str, str] | None = None) -> None:
    """Raise `InterpreterError` unless `python` can import the workers' runtime (with
    `env`, the environment the workers get); the driver's own interpreter is taken as it is."""
    if os.path.abspath(python) == os.path.abspath(sys.executable):  # a venv is its path, not its target
        return
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise InterpreterError(f"--python {python}: not an executable file; give the path of a Python interpreter "
                               "(a venv's bin/python)")
    environment = dict(env if env is not None else os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(p for p in (package_root(), environment.get("PYTHONPATH", "")) if p)
    try:
        proc = subprocess.run([python, "-c", f"NEEDED = {NEEDED!r}\n{_PROBE}"], capture_output=True, text=True,
                              timeout=120, env=environment)
    except (OSError, subprocess.SubprocessError) as exc:
        raise InterpreterError(f"--python {python}: does not run ({exc})") from None
    try:
        answer = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise InterpreterError(f"--python {python}: does not run as a Python interpreter ({last})") from None
    if answer["missing"]:
        raise InterpreterError(
            f"--python {python} (Python {answer['python']}): cannot run mutator's workers, missing "
            f"{', '.join(answer['missing'])}; install this package there with its dependencies "
            f"(`{python} -m pip install -e {package_root()}`, torch pinned first)")
    if answer["error"]:
        raise InterpreterError(f"--python {python} (Python {answer['python']}): cannot import mutator's worker "
                               f"runtime: {answer['error']}; install mutator's dependencies there "
                               f"(`{python} -m pip install -e {package_root()}`)")
