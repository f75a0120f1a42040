"""Runs confined, through real workers: a program may not write outside its run's directory,
connect over TCP or signal a process that is not its own, with Landlock and with the audit
hooks that stand in where the kernel has none; what programs need still works."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mutator.judge.check import Checker
from mutator.exec import landlock
from mutator.core.observation import RunConfig
from mutator.core.verdict import Verdict

from tests.conftest import program

pytestmark = pytest.mark.integration

# Every attempt is made in both runs (drive runs on the host side of each); what each raised
# is printed, so a confined run shows the same refusals eagerly and compiled: PASS.
TRESPASSER = """
import json, os, signal, socket
import torch

def fn(x):
    return x * 2

def inputs():
    return (torch.ones(2),)

def attempt(name, action):
    try:
        action()
        SEEN[name] = "done"
    except Exception as exc:
        SEEN[name] = type(exc).__name__

SEEN = {{}}

def write(path):
    with open(path, "w") as f:
        f.write("overwritten")

def connect():
    with socket.create_connection(("127.0.0.1", {port}), timeout=2):
        pass

def drive(f):
    out = f(*inputs())
    attempt("write outside", lambda: write({outside!r}))
    attempt("write campaign", lambda: write({campaign!r}))
    attempt("remove outside", lambda: os.remove({outside!r}))
    attempt("connect", connect)
    attempt("kill parent", lambda: os.kill(os.getppid(), signal.SIGTERM))
    attempt("write own dir", lambda: write("mine.txt"))
    attempt("write devnull", lambda: write(os.devnull))
    attempt("read torch", lambda: open(torch.__file__).read(10))
    print("SEEN " + json.dumps(SEEN, sort_keys=True))
    return out
"""


class Listener:
    """A loopback TCP listener counting the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join()
        self.sock.close()


@pytest.fixture
def listener():
    served = Listener()
    yield served
    served.close()


def seen(run) -> dict[str, str]:  # type: ignore[no-untyped-def]
    line = next(line for line in run.observation.stdout.head.splitlines() if line.startswith("SEEN "))
    return json.loads(line[5:])


@pytest.mark.parametrize("layer", ["on", "audit"])
def test_a_confined_program_touches_nothing_that_is_not_its_own(pool, listener, tmp_path: Path, layer: str):
    outside = tmp_path / "outside.txt"
    outside.write_text("theirs")
    campaign = tmp_path / "campaign"
    campaign.mkdir()
    (campaign / "stats.json").write_text("{}")
    restarts = pool.restarts
    checker = Checker(pool, config=RunConfig(timeout=30, sandbox=layer))
    result = checker.check(program(TRESPASSER.format(port=listener.port, outside=str(outside),
                                                     campaign=str(campaign / "stats.json"))))
    assert result.verdict is Verdict.PASS, result.judgement
    attempts = seen(result.eager)
    assert attempts == seen(result.compiled)
    refused = {"write outside", "write campaign", "remove outside", "connect", "kill parent"}
    assert {name for name, what in attempts.items() if what == "PermissionError"} == refused, attempts
    assert {name: attempts[name] for name in attempts.keys() - refused} == dict.fromkeys(
        ["write own dir", "write devnull", "read torch"], "done")
    assert outside.read_text() == "theirs" and (campaign / "stats.json").read_text() == "{}"
    assert sorted(p.name for p in campaign.iterdir()) == ["stats.json"]
    assert listener.accepted == 0
    assert pool.restarts == restarts  # the worker it tried to signal is alive


def test_without_the_sandbox_the_same_program_reaches_out(pool, listener, tmp_path: Path):
    """The other side of the test above: the refusals are the sandbox's, not the machine's."""
    outside = tmp_path / "outside.txt"
    outside.write_text("theirs")
    checker = Checker(pool, config=RunConfig(timeout=30, sandbox="off"))
    source = TRESPASSER.format(port=listener.port, outside=str(outside), campaign=str(tmp_path / "c.json"))
    result = checker.check(program(source.replace("os.kill(os.getppid(), signal.SIGTERM)", "os.kill(os.getppid(), 0)")))
    attempts = seen(result.eager)
    assert attempts["write outside"] == attempts["connect"] == attempts["kill parent"] == "done", attempts
    assert listener.accepted >= 1


def test_the_pool_says_which_layer_its_runs_get(pool):
    offered = "landlock ABI" if landlock.abi() else "audit hooks"
    assert pool.sandbox().startswith(offered)


def test_an_inductor_compile_works_confined(pool):
    """Inductor writes its cache and runs the C++ compiler: inside the run's directory (under
    the audit hooks, the programs Inductor starts are allowed: tests/unit/exec/test_sandbox.py)."""
    checker = Checker(pool, config=RunConfig(timeout=120, backend="inductor"))
    result = checker.check(program("""
        import torch
        def fn(x):
            return torch.sin(x) * 2 + 1
        def inputs():
            return (torch.arange(8.0),)
    """))
    assert result.verdict is Verdict.PASS, (result.judgement, result.compiled.stderr_tail[-2000:])


def test_mutate_run_json_names_the_layer(tmp_path: Path):
    """--no-sandbox: each row says "off" (what each choice gets: tests/unit/exec/test_sandbox.py)."""
    path = tmp_path / "prog.py"
    path.write_text("import torch\ndef fn(x):\n    return x + 1\ndef inputs():\n    return (torch.ones(2),)\n")
    done = subprocess.run([sys.executable, "cli.py", "run", "--json", "-j", "1", "--no-sandbox", str(path)],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2], timeout=300)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)
    assert row["sandbox"] == "off" and row["verdict"] == "PASS"
