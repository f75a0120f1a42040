"""How many workers one driver can feed: the real driver, fed recorded check results at the
rate N workers would deliver them.

The driver is the fuzz loop as `mutate fuzz` wires it (corpus, coverage map, schedule,
findings store, campaign directory, statistics, the progress snapshot); only the checker
is a stand-in: N virtual workers, each taking a check task and answering it after a
random 0.5-1 s (`--check-seconds`) with a reply replayed from a real campaign (features,
verdicts, sizes, findings as they were). So that the corpus keeps growing as in a long
campaign, `--fresh` of the replies (2%) also carry a few features never seen before.

For each N it prints the driver's CPU share (its thread's CPU time over wall time), the
checks it processed per second, how busy the virtual workers were (a driver that falls
behind leaves them idle), and its backlog (replies delivered, not yet processed). The
driver keeps up with N workers when they are busy at least 95% of the time and it uses
less than 90% of its core. Last line: `driver capacity = W workers`, the largest N that
kept up on one core.

The first run records the replies (a real campaign of `--record-checks` through the pool,
a few minutes) into `--record`; later runs replay them.

    python bench/driver.py [--workers 8,64,256,1024] [--seconds 20] [--record /tmp/mutator-replies.pkl]

Run it alone on the machine: anything else running halves what it measures.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import pickle
import random
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from mutator.core.features import pack  # noqa: E402

WARMUP = 2.0  # seconds of each replay not measured: the pipeline filling
FRESH_BASE = 1 << 40  # fresh features are arcs above this: no recorded arc is this large


@dataclass
class Recording:
    seeds: list[Any]  # the seeds' programs
    seed_replies: dict[str, Any]  # program digest -> CheckReply
    replies: list[Any]  # mutant check replies, in the order they came

    def save(self, path: Path) -> None:
        path.write_bytes(pickle.dumps(dict(seeds=self.seeds, seed_replies=self.seed_replies, replies=self.replies)))

    @classmethod
    def load(cls, path: Path) -> Recording:
        return cls(**pickle.loads(path.read_bytes()))


def record(path: Path, checks: int, jobs: int | None) -> Recording:
    """A real campaign through the pool: the seeds' dry run, then `checks` mutant checks."""
    from loop import build  # the parts mutate fuzz wires

    from mutator.campaign.fuzzer import Budget

    with tempfile.TemporaryDirectory(prefix="mutator-driver-") as tmp:
        seeds, pool, fuzzer, _ = build(Path(tmp) / "campaign", [ROOT / "seeds"], jobs=jobs, seed=0)
        seed_replies: dict[str, Any] = {}
        replies: list[Any] = []
        submit = fuzzer.checker.submit

        def recording(task):  # type: ignore[no-untyped-def]
            future = submit(task)
            if task.recipe is None and not task.steps:
                future.add_done_callback(lambda f: seed_replies.__setitem__(task.program.digest, f.result()))
            else:
                future.add_done_callback(lambda f: replies.append(f.result()))
            return future

        fuzzer.checker.submit = recording
        with pool:
            pool.wait_ready()
            fuzzer.seed(seeds)
            fuzzer.run(Budget(max_execs=checks))
            fuzzer.campaign.close()
    recording_ = Recording(seeds, seed_replies, replies)
    recording_.save(path)
    return recording_


class CountedFuture(Future):  # type: ignore[type-arg]
    """Counts, on its checker, the replies the driver has taken (`result()` once per reply)."""

    def __init__(self, owner: ReplayChecker) -> None:
        super().__init__()
        self._owner = owner
        self._taken = False

    def result(self, timeout: float | None = None) -> Any:
        value = super().result(timeout)
        if not self._taken:
            self._taken = True
            self._owner.consumed += 1  # only the driver's thread takes results
        return value


class ReplayChecker:
    """N virtual workers answering check tasks with recorded replies after 0.5-1 s each."""

    def __init__(self, recording: Recording, *, workers: int, seconds: tuple[float, float], fresh: float,
                 rng: random.Random) -> None:
        self._recording = recording
        self._replies = itertools.cycle(recording.replies)
        self._workers = workers
        self._seconds = seconds
        self._fresh = fresh
        self._rng = rng
        self._fresh_ids = itertools.count(FRESH_BASE)
        self._whole = itertools.cycle([r.coverage.features() for r in recording.replies
                                       if r.coverage is not None and r.coverage.packed] or [frozenset()])
        self._heap: list[tuple[float, int, CountedFuture, Any]] = []
        self._waiting: list[tuple[CountedFuture, Any]] = []
        self._order = itertools.count()
        self._busy = 0
        self._cv = threading.Condition()
        self._stop = False
        self.completed = 0
        self.consumed = 0
        self.busy_seconds = 0.0
        self.backlog: list[int] = []
        self._thread = threading.Thread(target=self._deliver, daemon=True, name="replay")
        self._thread.start()

    @property
    def size(self) -> int:  # as an executor has: the loop keeps two checks in flight per worker
        return self._workers

    def health(self) -> list[str]:
        return ["busy"] * self._busy + ["idle"] * (self._workers - self._busy)

    def submit(self, task: Any) -> CountedFuture:
        future = CountedFuture(self)
        reply = self._reply(task)
        with self._cv:
            if self._busy < self._workers:
                self._start(future, reply)
            else:
                self._waiting.append((future, reply))
            self._cv.notify()
        return future

    def _reply(self, task: Any) -> Any:
        if task.recipe is None and not task.steps:
            return self._recording.seed_replies[task.program.digest]
        template = next(self._replies)
        result = template.result
        if result is None:
            return template
        program = replace(result.program, name=task.name or result.program.name)
        reply = replace(template, result=replace(result, program=program))
        if self._rng.random() >= self._fresh:
            return reply
        fresh = frozenset(next(self._fresh_ids) for _ in range(self._rng.randint(1, 10)))
        if template.coverage is None:  # a finding's, or a result sent whole
            return replace(reply, result=replace(reply.result, precomputed=result.features | fresh))
        # as a worker reports a check with features never seen: new ones, and all of them packed
        # (those of a recorded check, so that a kept entry is as large as a real one)
        whole = next(self._whole) | fresh
        return replace(reply, coverage=replace(template.coverage, new=template.coverage.new | fresh,
                                                packed=pack(whole)))

    def _start(self, future: CountedFuture, reply: Any) -> None:
        seconds = self._rng.uniform(*self._seconds)
        self._busy += 1
        self.busy_seconds += seconds
        heapq.heappush(self._heap, (time.monotonic() + seconds, next(self._order), future, reply))

    def _deliver(self) -> None:
        last_sample = 0.0
        while True:
            with self._cv:
                while not self._stop and (not self._heap or self._heap[0][0] > time.monotonic()):
                    timeout = self._heap[0][0] - time.monotonic() if self._heap else 0.1
                    self._cv.wait(max(0.0, min(timeout, 0.1)))
                    if time.monotonic() - last_sample >= 0.1:
                        last_sample = time.monotonic()
                        self.backlog.append(self.completed - self.consumed)
                if self._stop:
                    return
                _, _, future, reply = heapq.heappop(self._heap)
                self._busy -= 1
                self.completed += 1
                if self._waiting:
                    self._start(*self._waiting.pop(0))
            future.set_result(reply)  # the driver's callback puts it on its queue

    def close(self) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify()
        self._thread.join()


def replay(recording: Recording, workers: int, seconds: float, args: argparse.Namespace) -> dict[str, float]:
    from mutator.campaign.directory import Campaign, CampaignConfig
    from mutator.campaign.fuzzer import Budget
    from mutator.campaign.lanes.repair import RepairLane
    from mutator.commands.fuzz import build_fuzzer

    lo, hi = (float(x) for x in args.check_seconds.split("-"))
    with tempfile.TemporaryDirectory(prefix="mutator-driver-") as tmp:
        config = CampaignConfig(corpus=("seeds",))
        campaign = Campaign.create(Path(tmp) / "campaign", config)
        checker = ReplayChecker(recording, workers=workers, seconds=(lo, hi), fresh=args.fresh,
                                rng=random.Random(0))
        fuzzer = build_fuzzer(campaign, checker, torch_version="", checker=checker, lanes=[RepairLane()])
        fuzzer.seed(recording.seeds)
        fuzzer.run(Budget(seconds=WARMUP), on_progress=lambda snapshot: None)
        base_checks, base_busy, base_samples = fuzzer.session_execs, checker.busy_seconds, len(checker.backlog)
        cpu, wall = time.thread_time(), time.monotonic()
        fuzzer.run(Budget(seconds=seconds), on_progress=lambda snapshot: None)
        cpu, wall = time.thread_time() - cpu, time.monotonic() - wall
        checks = fuzzer.session_execs - base_checks
        busy = checker.busy_seconds - base_busy
        backlog = checker.backlog[base_samples:] or [0]
        checker.close()
        corpus = len(fuzzer.corpus)
        features = len(fuzzer.coverage)
        campaign.close()
    return dict(workers=workers, cpu_share=cpu / wall, checks_per_sec=checks / wall,
                cpu_ms_per_check=1000 * cpu / max(1, checks), busy=min(1.0, busy / (workers * wall)),
                backlog_mean=statistics.mean(backlog), backlog_max=max(backlog), corpus=corpus, features=features)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", default="8,64,256,1024", help="virtual worker counts, comma-separated")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds of each replay")
    parser.add_argument("--check-seconds", default="0.5-1.0", help="a virtual worker's seconds per check")
    parser.add_argument("--fresh", type=float, default=0.02, help="share of replies with never-seen features")
    parser.add_argument("--record", type=Path, default=Path(tempfile.gettempdir()) / "mutator-replies.pkl")
    parser.add_argument("--record-checks", type=int, default=300)
    parser.add_argument("-j", "--jobs", type=int, default=None, help="real workers of the recording")
    args = parser.parse_args()
    if args.record.exists():
        recording = Recording.load(args.record)
    else:
        print(f"recording {args.record_checks} checks of a real campaign into {args.record} ...", flush=True)
        recording = record(args.record, args.record_checks, args.jobs)
    every = [len(r.coverage.features()) if r.coverage is not None and r.coverage.packed else len(r.result.features)
             for r in recording.replies if r.result is not None and (r.coverage is None or r.coverage.packed)]
    reported = [len(r.coverage.new) for r in recording.replies if r.coverage is not None]
    print(f"replaying {len(recording.replies)} recorded replies ({len(recording.seeds)} seeds); features of a check "
          f"sent whole: median {statistics.median(every or [0]):.0f}; new features a worker reports: median "
          f"{statistics.median(reported or [0]):.0f}; {args.check_seconds} s per check, {args.seconds:g} s per row")
    print(f"{'workers':>8} {'checks/s':>9} {'driver CPU':>11} {'ms/check':>9} {'workers busy':>13} "
          f"{'backlog mean':>13} {'max':>6} {'corpus':>7} {'features':>9}")
    capacity = 0
    for n in (int(x) for x in args.workers.split(",")):
        row = replay(recording, n, args.seconds, args)
        keeps_up = row["busy"] >= 0.95 and row["cpu_share"] < 0.9
        capacity = n if keeps_up and n > capacity else capacity
        print(f"{n:8d} {row['checks_per_sec']:9.1f} {row['cpu_share']:10.0%} {row['cpu_ms_per_check']:9.2f} "
              f"{row['busy']:12.0%} {row['backlog_mean']:13.1f} {row['backlog_max']:6d} {row['corpus']:7d} "
              f"{row['features']:9d}" + ("" if keeps_up else "   falls behind"), flush=True)
    print(f"driver capacity = {capacity} workers")


if __name__ == "__main__":
    main()
