"""Ray actors as workers, on a local Ray instance started here (loopback only, 2 CPUs): the
same checks as the pool, a short campaign and `mutate run` through `--ray`, and an actor
killed under a run (its program is lost, the rest goes on)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mutator.judge.check import Checker, CheckTask
from mutator.core.observation import Mode, Outcome, RunConfig
from mutator.core.verdict import Verdict

from tests.conftest import program

ray = pytest.importorskip("ray", reason="the Ray backend is optional: pip install 'mutator[ray]'")
pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PASSING = """
    import torch
    def fn(x):
        return x.sin() + 1
    def inputs():
        return (torch.ones(3),)
"""
KILLS_ITS_WORKER = """
    import os, signal
    import torch
    def fn(x):
        return x + 1
    def inputs():
        os.kill(os.getppid(), signal.SIGKILL)
        return (torch.ones(3),)
"""
MISMATCH = """
    import torch
    def fn(x):
        if torch.compiler.is_compiling():  # a divergence on purpose: only the compiled run adds
            return x + 1
        return x * 1
    def inputs():
        return (torch.ones(3),)
"""


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RAY_"))}
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          timeout=900, cwd=cwd, env=env)


def seeds(tmp_path: Path) -> Path:
    directory = tmp_path / "seeds"
    directory.mkdir()
    (directory / "passing.py").write_text(textwrap.dedent(PASSING).lstrip())
    (directory / "kills_its_worker.py").write_text(textwrap.dedent(KILLS_ITS_WORKER).lstrip())
    return directory


@pytest.mark.soak  # a campaign through a local Ray instance: 45 s
def test_a_campaign_and_mutate_run_through_ray_actors(tmp_path: Path):
    """`mutate fuzz --ray` and `mutate run --ray` start a local Ray instance of their own; a
    seed that kills the actor running it is set aside with its program in lost/, and the
    campaign goes on on the restarted actor."""
    corpus = seeds(tmp_path)
    fuzz = cli("fuzz", "--ray", "-j", "2", "--corpus", str(corpus), "--out", str(tmp_path / "campaign"),
               "--max-execs", "10", "--no-ui", "--no-reduce", "--no-sandbox", cwd=tmp_path)  # the killer's signal
    assert fuzz.returncode == 0, fuzz.stderr[-3000:]
    campaign = tmp_path / "campaign"
    stats = json.loads((campaign / "stats.json").read_text())
    assert stats["counters"]["execs"] >= 10 and stats["counters"]["lost"] >= 1
    assert any("os.getppid()" in p.read_text() for p in (campaign / "lost").glob("*.py"))
    set_aside = json.loads((campaign / "set_aside.json").read_text())
    assert [row["path"] for row in set_aside] == [str(corpus / "kills_its_worker.py")]
    assert "raylet" not in fuzz.stdout  # Ray's own messages go to stderr: stdout is the summary
    kept = sorted((campaign / "queue").glob("id:*.py"))
    assert kept and all(json.loads(p.with_suffix(".json").read_text())["features"] for p in kept)

    judged = cli("run", "--ray", "-j", "2", "--json", str(corpus / "passing.py"), cwd=tmp_path)
    assert judged.returncode == 0, judged.stderr[-3000:]
    [row] = json.loads(judged.stdout)
    assert row["verdict"] == "PASS"


@pytest.fixture(scope="module")
def actors():
    from mutator.exec.ray import RayExecutor

    # unconfined: a program killing its actor stands for an actor's death (the sandbox refuses the signal)
    executor = RayExecutor(workers=2, config=RunConfig(timeout=30, sandbox="off"), coverage=("torch/_dynamo",),
                           init=dict(num_cpus=2, _node_ip_address="127.0.0.1"))
    executor.wait_ready()
    yield executor
    executor.close()


def test_actors_judge_like_the_pool_and_confirm_on_another_actor(actors):
    checker = Checker(actors)
    passing = checker.check(program(PASSING))
    assert passing.verdict is Verdict.PASS and passing.compiled.features
    mismatch = checker.check(program(MISMATCH))
    assert mismatch.verdict is Verdict.MISMATCH, mismatch.reason
    eager_workers = [run.worker for run in mismatch.runs if run.mode is Mode.EAGER]
    assert len(set(eager_workers)) == 2  # the second eager run went to the other actor


def test_an_actor_killed_under_a_run_loses_that_run_and_comes_back(actors):
    restarts = actors.restarts
    lost = actors.run(program(KILLS_ITS_WORKER), Mode.EAGER)
    assert lost.outcome is Outcome.LOST and "Ray actor" in lost.detail
    assert actors.restarts == restarts + 1
    checked = Checker(actors).check(program(KILLS_ITS_WORKER))
    assert checked.verdict is Verdict.INVALID and checked.eager.outcome is Outcome.LOST
    deadline = time.monotonic() + 300
    while any(state in ("restarting", "starting") for state in actors.health()) and time.monotonic() < deadline:
        time.sleep(0.5)  # Ray restarts them; they warm up again
    assert all(state in ("idle", "busy") for state in actors.health()), actors.health()
    checker = Checker(actors)
    results = [f.result().result for f in [checker.submit(CheckTask(program(PASSING))) for _ in range(4)]]
    assert all(r.verdict is Verdict.PASS for r in results)
    assert len({r.eager.worker for r in results}) == 2  # both restarted actors take work
