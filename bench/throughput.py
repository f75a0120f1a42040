"""Throughput of judging programs, three ways, measured side by side in one invocation.

(a) a fresh `python` subprocess per program: import torch, eager run, compiled run, compare;
(b) `WorkerPool` + `Checker`: warm workers, a forked child per run (the product);
    measured with the default two workers (eager and compiled side by side) and with one;
(c) one warm process, no isolation: eager run, compiled run, compare, with
    `torch._dynamo.reset()` between programs: the physical limit.

Prints per-program medians and the ratios (b)/(c) and (a)/(b); then what confirmation
costs: how often a check pays a third eager run (only when two eager runs disagree: the
mask of run-specific values must be confirmed), on the seeds and on the foreign-style
programs with run-specific values, and what share of run time those third runs take.

Last, what the sandbox costs: the same programs through one worker with each layer.

    python bench/throughput.py [--programs 20] [--seeds seeds/] [--foreign tests/foreign/run_specific]
                               [--sandbox-only]
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
    from mutator.core.observation import ExecResult, Mode, Outcome, RunConfig
    from mutator.judge.oracle import Oracle
    from mutator.core.program import load_program
    from mutator.runtime.execute import run_program

    if warm:
        from mutator.exec.worker import warm_up

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


def pool_per_program(paths: list[str], workers: int, sandbox: str = "on") -> list[float]:
    from mutator.judge.check import Checker
    from mutator.exec.pool import WorkerPool
    from mutator.core.observation import Mode, RunConfig
    from mutator.core.program import load_program

    with WorkerPool(workers=workers, config=RunConfig(sandbox=sandbox)) as pool:
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


def confirmation_cost(paths: list[Path]) -> dict[str, float]:
    """Check every program once through a 2-worker pool; count eager runs and their seconds."""
    from mutator.judge.check import Checker
    from mutator.core.observation import Mode
    from mutator.exec.pool import WorkerPool
    from mutator.core.program import load_program

    programs = [load_program(p) for p in paths]
    with WorkerPool(workers=2) as pool:
        pool.wait_ready()
        results = [Checker(pool).check(program) for program in programs]
    third = [r for r in results if sum(run.mode is Mode.EAGER for run in r.runs) >= 3]
    return {
        "checks": len(results),
        "confirmed": sum(len(r.runs) > 2 for r in results),
        "third": len(third),
        "masked": sum(bool(r.judgement.masked) for r in results),
        "third_seconds": sum([run for run in r.runs if run.mode is Mode.EAGER][2].seconds for r in third),
        "run_seconds": sum(r.seconds for r in results),
    }


def sandbox_cost(paths: list[str], rounds: int = 3) -> dict[str, float]:
    """Median seconds per program through a 1-worker pool with each sandbox layer, the layers
    taking turns round by round (so that the machine's drift falls on all of them)."""
    times: dict[str, list[float]] = {"off": [], "on": [], "audit": []}
    for _ in range(rounds):
        for layer in times:
            times[layer] += pool_per_program(paths, workers=1, sandbox=layer)
    return {layer: statistics.median(t) for layer, t in times.items()}


def print_sandbox_cost(paths: list[str]) -> None:
    from mutator.exec.sandbox import available

    cost = sandbox_cost(paths)
    print(f"sandbox, 1 worker, {len(paths)} programs x 3 rounds, layers in turn; per-program medians:")
    print(f"  off                       {cost['off'] * 1000:8.1f} ms")
    print(f"  on ({available():18}) {cost['on'] * 1000:8.1f} ms   {cost['on'] / cost['off'] - 1:+.1%}  (target <= +5%)")
    print(f"  audit hooks               {cost['audit'] * 1000:8.1f} ms   {cost['audit'] / cost['off'] - 1:+.1%}")


def shift_cost(repeat: int = 2000) -> float:
    """Milliseconds per run that shifting the heap costs (every run pays it)."""
    from mutator.runtime.execute import shift_addresses

    started = time.perf_counter()
    for _ in range(repeat):
        shift_addresses()
    return (time.perf_counter() - started) / repeat * 1000


def passing_seeds(seeds: Path, limit: int) -> list[str]:
    known = set(json.loads((seeds / "known_findings.json").read_text()))
    paths = [p for p in sorted(seeds.rglob("*.py")) if p.relative_to(seeds).as_posix() not in known]
    step = max(1, len(paths) // limit)
    return [str(p) for p in paths[::step][:limit]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=20)
    parser.add_argument("--seeds", type=Path, default=ROOT / "seeds")
    parser.add_argument("--foreign", type=Path, default=ROOT / "tests" / "foreign" / "run_specific")
    parser.add_argument("--sandbox-only", action="store_true", help="Measure only what the sandbox costs.")
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
    if args.sandbox_only:
        print_sandbox_cost(paths)
        return
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

    print("confirmation, 2 workers, every program checked once:")
    for name, folder in (("seeds", args.seeds), ("foreign run-specific", args.foreign)):
        cost = confirmation_cost(sorted(folder.rglob("*.py")))
        share = cost["third_seconds"] / cost["run_seconds"] if cost["run_seconds"] else 0.0
        print(f"  {name:22} {cost['checks']:3.0f} checks, {cost['confirmed']:3.0f} confirmed, {cost['masked']:3.0f} "
              f"masked; third eager runs {cost['third']:3.0f}, {share:5.1%} of all run time")
    print(f"  shifting the heap before each run: {shift_cost():.3f} ms per run")
    print_sandbox_cost(paths)


if __name__ == "__main__":
    main()
