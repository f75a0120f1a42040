"""The background reducer's share of the workers."""

from __future__ import annotations

import threading
from concurrent.futures import Future

from mutator.core.observation import ExecResult, Mode, Outcome
from mutator.core.program import Program
from mutator.exec.pool import URGENT
from mutator.reduce.background import ThrottledRunner

from tests.helpers import run
from tests.unit.findings.helpers import ONE


class _Instant:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.submitted = 0
        self.priorities: list[int] = []

    def submit(self, program, mode, config=None, *, avoid=None, priority=0):
        self.submitted += 1
        self.priorities.append(priority)
        future: Future[ExecResult] = Future()
        future.set_result(ExecResult(program="p.py", mode=mode, outcome=Outcome.COMPLETED,
                                     observation=run().observation, seconds=self.seconds))
        return future


def test_the_throttled_runner_keeps_its_share_of_the_workers():
    now = [0.0]
    pool = _Instant(seconds=1.0)
    throttled = ThrottledRunner(pool, workers=2, max_share=0.25, stop=threading.Event(), clock=lambda: now[0])
    program = Program.from_source(ONE, "p.py")
    throttled.submit(program, Mode.EAGER)  # 1 s used at t=0
    assert throttled.over_budget()
    now[0] = 1.9  # 2 workers x 25% x 1.9 s = 0.95 s of budget
    assert throttled.over_budget()
    now[0] = 2.1
    assert not throttled.over_budget()
    throttled.charge(5.0)  # a repro.py run outside the pool counts too
    assert throttled.over_budget()
    stop = threading.Event()
    stop.set()
    stopped = ThrottledRunner(pool, workers=2, max_share=0.0, stop=stop, clock=lambda: 0.0)
    stopped.submit(program, Mode.EAGER)  # never waits once stopping
    assert pool.submitted == 2
    assert pool.priorities == [URGENT, URGENT]  # its share is bounded, so it jumps the loop's queue
