"""Where the fuzz loop's time goes, and how close it comes to the pool's own speed.

Runs a real campaign (the shipped seeds' dry run, then the loop for a fixed number of
checks; background reduction and the LLM off, rule repair on) and prints, per check:

- the driver's CPU by phase (exclusive: a phase inside another is charged to itself):
  choose, mutate, submit, receive (unpickling what workers send), judge (the oracle, where
  it runs in the driver), merge coverage, write the campaign directory, repair, reduction
  bookkeeping, and the rest of the loop;
- the workers' CPU (their processes and the children they forked) and their wall time by
  run: the first eager run, the first compiled run (with the arc tracer), confirmation
  runs, and the floor of a run (fork, runtime set-up and report of an empty program).

Then the same programs (the loop's mutants, as it checked them) go through the pool
alone, as many at once as the loop kept in flight. Last line: `loop/pool = R`, the loop's
checks per second over the pool's on the same programs, measured side by side in one run.

    python bench/loop.py [--checks 200] [--seeds seeds/] [-j 2] [--seed 0]

Run it alone on the machine: anything else running halves what it measures.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PHASES = ("choose", "mutate", "submit", "receive", "judge", "merge coverage", "write campaign dir", "repair",
          "reduction bookkeeping", "loop (rest)")


class Phases:
    """Exclusive CPU time per phase, per thread (time.thread_time), summed over threads."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._local = threading.local()
        self._lock = threading.Lock()

    def wrap(self, owner: Any, attr: str, phase: str) -> bool:
        """Charge calls of `owner.attr` to `phase`; False when `owner` has no such attribute."""
        original = getattr(owner, attr, None)
        if original is None:
            return False
        timed = self.timed(original, phase)
        if isinstance(owner, type) and isinstance(owner.__dict__.get(attr), classmethod):
            setattr(owner, attr, classmethod(self.timed(original.__func__, phase)))
        elif isinstance(owner, type) and isinstance(owner.__dict__.get(attr), staticmethod):
            setattr(owner, attr, staticmethod(timed))
        else:
            setattr(owner, attr, timed)
        return True

    def timed(self, function: Callable[..., Any], phase: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            self._enter(phase)
            try:
                return function(*args, **kwargs)
            finally:
                self._leave()

        return call

    def _enter(self, phase: str) -> None:
        stack = self._stack()
        now = time.thread_time()
        if stack:
            self._charge(stack[-1][0], now - stack[-1][1])
        stack.append([phase, now])

    def _leave(self) -> None:
        stack = self._stack()
        now = time.thread_time()
        phase, since = stack.pop()
        self._charge(phase, now - since)
        with self._lock:
            self.calls[phase] += 1
        if stack:
            stack[-1][1] = now

    def _charge(self, phase: str, seconds: float) -> None:
        with self._lock:
            self.cpu[phase] += seconds

    def _stack(self) -> list[list[Any]]:
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        return self._local.stack

    def reset(self) -> None:
        with self._lock:
            self.cpu.clear()
            self.calls.clear()


def process_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def workers_cpu(pids: list[int]) -> float:
    """utime + stime of the workers and of the children they have waited for, in seconds."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / os.sysconf("SC_CLK_TCK")


def instrument(phases: Phases, fuzzer: Any) -> None:
    """Probes on the driver's parts; each names a phase of PHASES. Whatever a version of the
    loop lacks (no mutation in the driver, say) is simply not there to charge."""
    import mutator.campaign.fuzzer as fuzzer_module
    from mutator.campaign.lanes import reducing, repair
    from mutator.judge import check, oracle

    phases.wrap(fuzzer.schedule, "choose", "choose")
    phases.wrap(fuzzer.mutator, "mutate", "mutate")
    phases.wrap(fuzzer.mutator, "plan", "mutate")
    wire = sys.modules.get("mutator.exec.wire")
    if wire is not None:
        phases.wrap(wire, "recv", "receive")
        phases.wrap(wire, "send", "submit")
    phases.wrap(oracle.Oracle, "judge", "judge")
    phases.wrap(oracle.Oracle, "run_specific", "judge")
    for name in ("check", "submit", "_run", "_submit"):
        phases.wrap(check.Checker, name, "submit")
    phases.wrap(fuzzer.coverage, "new", "merge coverage")
    phases.wrap(fuzzer.coverage, "add", "merge coverage")
    phases.wrap(fuzzer_module, "semantic_features", "merge coverage")
    for name in ("save_entry", "save_invalid", "save_lost", "save_stats", "save_coverage", "append_plot"):
        phases.wrap(fuzzer.campaign, name, "write campaign dir")
    phases.wrap(fuzzer.store, "record", "write campaign dir")
    phases.wrap(repair, "repair_by_rules", "repair")
    for lane in fuzzer.lanes:  # the repair lane's work on an invalid mutant, the reductions' records
        if isinstance(lane, repair.RepairLane):
            phases.wrap(lane, "checked", "repair")
            phases.wrap(lane, "poll", "repair")
        elif isinstance(lane, reducing.ReductionLane):
            phases.wrap(lane, "poll", "reduction bookkeeping")
    for name in ("_process", "_drain", "_mutants", "snapshot"):
        phases.wrap(fuzzer, name, "loop (rest)")


def run_floor(pool: Any, repeat: int = 8) -> float:
    """Median wall seconds of one run of an empty harness program: fork, set-up, report."""
    from mutator.core.observation import Mode
    from mutator.core.program import Program

    empty = Program.from_source("def fn(x):\n    return x\n\n\ndef inputs():\n    return (1,)\n", "empty.py")
    return statistics.median(pool.submit(empty, Mode.EAGER).result().seconds for _ in range(repeat))


def build(root: Path, seed_paths: list[Path], *, jobs: int | None, seed: int):  # type: ignore[no-untyped-def]
    """The loop `mutate fuzz` wires (`build_fuzzer`), without the LLM and the background
    reduction, on a new pool; `checked` collects every check result the loop processes,
    with the seconds its worker spent building the mutant."""
    from mutator.campaign.directory import Campaign, CampaignConfig
    from mutator.campaign.lanes.repair import RepairLane
    from mutator.commands.fuzz import build_fuzzer
    from mutator.exec.pool import WorkerPool
    from mutator.core.observation import RunConfig
    from mutator.core.program import load_programs

    seeds, errors = load_programs(seed_paths)
    assert not errors, errors
    config = CampaignConfig(corpus=tuple(map(str, seed_paths)), seed=seed)
    campaign = Campaign.create(root, config)
    pool = WorkerPool(workers=jobs, config=RunConfig(), coverage=config.coverage)
    fuzzer = build_fuzzer(campaign, pool, torch_version="", lanes=[RepairLane()])
    checked: list[Any] = []
    process = fuzzer._process

    def recorded(job, result, reply=None):  # type: ignore[no-untyped-def]
        checked.append((result, reply.build_seconds if reply is not None else 0.0))
        return process(job, result, reply)

    fuzzer._process = recorded
    return seeds, pool, fuzzer, checked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checks", type=int, default=200, help="checks of the loop after the seeds' dry run")
    parser.add_argument("--seeds", type=Path, action="append", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-j", "--jobs", type=int, default=None)
    args = parser.parse_args()

    from mutator.campaign.fuzzer import Budget

    with tempfile.TemporaryDirectory(prefix="mutator-loop-") as tmp:
        seeds, pool, fuzzer, checked = build(Path(tmp) / "campaign", args.seeds or [ROOT / "seeds"],
                                             jobs=args.jobs, seed=args.seed)
        with pool:
            pool.wait_ready()
            floor = run_floor(pool)
            fuzzer.seed(seeds)
            phases = Phases()
            instrument(phases, fuzzer)
            checked.clear()
            pids = [r.pid for r in pool.ready]
            cpu0, workers0, wall0 = process_cpu(), workers_cpu(pids), time.monotonic()
            fuzzer.run(Budget(max_execs=args.checks))
            loop_wall = time.monotonic() - wall0
            loop_cpu, loop_workers = process_cpu() - cpu0, workers_cpu(pids) - workers0
            # the probes stay in place for the pool's turn below, which must not be charged to the loop
            loop_phases, loop_calls = dict(phases.cpu), dict(phases.calls)
            n = len(checked)
            results = [result for result, _ in checked]
            building = sum(seconds for _, seconds in checked)
            programs = [r.program for r in results]

            from mutator.judge.check import Checker

            plain = Checker(pool)
            cpu1, workers1, wall1 = process_cpu(), workers_cpu(pids), time.monotonic()
            with ThreadPoolExecutor(max_workers=fuzzer.inflight) as executor:
                again = list(executor.map(plain.check, programs))
            pool_wall = time.monotonic() - wall1
            pool_cpu, pool_workers = process_cpu() - cpu1, workers_cpu(pids) - workers1
            fuzzer.campaign.close()

    print(f"{len(seeds)} seeds, {n} checks of the loop, {pool.size} workers, {fuzzer.inflight} checks in flight")
    print(f"driver CPU per check, by phase (ms): total {1000 * loop_cpu / n:.1f}")
    accounted = 0.0
    for phase in PHASES:
        seconds = loop_phases.get(phase, 0.0)
        accounted += seconds
        print(f"  {phase:24} {1000 * seconds / n:8.1f}   ({loop_calls.get(phase, 0)} calls)")
    print(f"  {'unaccounted':24} {1000 * (loop_cpu - accounted) / n:8.1f}   (threads, queues, interpreter)")
    runs = [(i, run) for r in results for i, run in enumerate(r.runs)]
    eager = [run.seconds for i, run in runs if i == 0]
    compiled = [run.seconds for i, run in runs if i == 1]
    confirm = [run.seconds for i, run in runs if i >= 2]
    print(f"workers per check: CPU {1000 * loop_workers / n:.0f} ms, of which building mutants (and repair "
          f"rules) {1000 * building / n:.0f} ms; wall by run (ms): "
          f"eager {1000 * sum(eager) / n:.0f}, compiled+tracer {1000 * sum(compiled) / n:.0f}, "
          f"confirmation {1000 * sum(confirm) / n:.0f} ({len(confirm)} runs); "
          f"floor of a run (fork, set-up, report) {1000 * floor:.0f} ms x {len(runs) / n:.2f} runs")
    verdicts: dict[str, int] = defaultdict(int)
    for r in results:
        verdicts[r.verdict.name] += 1
    print("verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
    loop_rate, pool_rate = n / loop_wall, len(again) / pool_wall
    print(f"loop: {loop_rate:.2f} checks/s, driver CPU {loop_cpu / loop_wall:.0%} of a core, "
          f"workers {loop_workers / loop_wall:.0%}")
    print(f"pool: {pool_rate:.2f} checks/s, driver CPU {pool_cpu / pool_wall:.0%} of a core, "
          f"workers {pool_workers / pool_wall:.0%}")
    print(f"loop/pool = {loop_rate / pool_rate:.2f}")


if __name__ == "__main__":
    random.seed(0)
    main()
