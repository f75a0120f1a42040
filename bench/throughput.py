"""Throughput of judging programs, three ways, measured side by side in one invocation.

(a) a fresh `python` subprocess per program: import torch, eager run, compiled run, compare;
(b) `WorkerPool` + `Checker`: warm workers, a forked child per run (the product);
    measured with the default two workers (eager and compiled side by side) and with one;
(c) one warm process, no isolation: eager run, compiled run, compare, with
    `torch._dynamo.reset()` between programs: the physical limit.

Prints per-program medians and the ratios (b)/(c) and (a)/(b).

    python bench/throughput.py [--programs 20] [--seeds seeds/]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def judge_in_process(paths: list[str], *, warm: bool) -> list[float]:
    """Eager + compiled + compare per program in this process; seconds per program."""
    import torch

    torch.set_num_threads(1)
    from mutator.observation import ExecResult, Mode, Outcome, RunConfig
    from mutator.oracle import Oracle
    from mutator.program import load_program
    from mutator.runtime.execute import run_program

    if warm:
        from mutator.worker import warm_up

        warm_up()
        import gc

        gc.unfreeze()
    oracle, config, times = Oracle(), RunConfig(), []
    for path in paths:
        program = load_program(path)
        started = time.perf_counter()
        results = []
        for mode in (Mode.EAGER, Mode.COMPILED):
            calls: list = []
            observation = run_program(program, mode, config, calls.append)
            results.append(ExecResult(program.name, mode, Outcome.COMPLETED,
                                      observation.__class__(**{**_fields(observation), "calls": tuple(calls)})))
            torch._dynamo.reset()
        oracle.judge(*results, program=program)
        times.append(time.perf_counter() - started)
    return times


def _fields(obj: object) -> dict:
    return {name: getattr(obj, name) for name in obj.__dataclass_fields__}  # type: ignore[attr-defined]


def fresh_process_per_program(paths: list[str]) -> list[float]:
    times = []
    for path in paths:
        started = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--single", path], check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return times


def pool_per_program(paths: list[str], workers: int) -> list[float]:
    from mutator.check import Checker
    from mutator.observation import Mode
    from mutator.pool import WorkerPool
    from mutator.program import load_program

    with WorkerPool(workers=workers) as pool:
        checker = Checker(pool)
        for f in [pool.submit(load_program(paths[0]), Mode.EAGER) for _ in range(workers)]:
            f.result()  # wait for every worker to be warm: start-up is not per-program cost
        times = []
        for path in paths:
            program = load_program(path)
            started = time.perf_counter()
            checker.check(program)
            times.append(time.perf_counter() - started)
    return times


def passing_seeds(seeds: Path, limit: int) -> list[str]:
    known = set(json.loads((seeds / "known_findings.json").read_text()))
    paths = [p for p in sorted(seeds.rglob("*.py")) if p.relative_to(seeds).as_posix() not in known]
    step = max(1, len(paths) // limit)
    return [str(p) for p in paths[::step][:limit]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=20)
    parser.add_argument("--seeds", type=Path, default=ROOT / "seeds")
    parser.add_argument("--single", help=argparse.SUPPRESS)
    parser.add_argument("--in-process", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.single:
        judge_in_process([args.single], warm=False)
        return
    if args.in_process:
        print(json.dumps(judge_in_process(args.in_process, warm=True)))
        return

    paths = passing_seeds(args.seeds, args.programs)
    print(f"{len(paths)} passing seeds from {args.seeds}; per-program medians:")
    warm = subprocess.run([sys.executable, __file__, "--in-process", *paths], check=True, capture_output=True, text=True)
    c = json.loads(warm.stdout.strip().splitlines()[-1])
    b2 = pool_per_program(paths, workers=2)
    b1 = pool_per_program(paths, workers=1)
    a = fresh_process_per_program(paths)
    med = {name: statistics.median(v) for name, v in {"a": a, "b2": b2, "b1": b1, "c": c}.items()}
    print(f"  (a) fresh python per program      {med['a'] * 1000:8.1f} ms")
    print(f"  (b) WorkerPool, 2 workers         {med['b2'] * 1000:8.1f} ms   (eager and compiled side by side)")
    print(f"  (b) WorkerPool, 1 worker          {med['b1'] * 1000:8.1f} ms   (eager then compiled)")
    print(f"  (c) one warm process, no isolation {med['c'] * 1000:7.1f} ms")
    print(f"  (b)/(c) = {med['b2'] / med['c']:.2f} with 2 workers, {med['b1'] / med['c']:.2f} with 1   (target <= 1.3)")
    print(f"  (a)/(b) = {med['a'] / med['b2']:.1f} with 2 workers, {med['a'] / med['b1']:.1f} with 1   (target >= 30)")


if __name__ == "__main__":
    main()
