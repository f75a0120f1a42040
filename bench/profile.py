"""Where a campaign's CPU goes, against the physical limit of a check (issue 32).

    python bench/profile.py [--corpus seeds --corpus HARVESTED] [--execs 400] [--jobs 1]
                            [--flags "--no-reduce"] [--limit-programs 40] [--python PATH] [--out DIR]

Runs one fixed-budget campaign (`mutate fuzz --max-execs N`, seed 1) as a child process and
takes its whole CPU from the operating system (the driver, its workers and every forked run
they reaped: `RUSAGE_CHILDREN`), then its own account of it by stage (stats.json's `cpu`,
`mutator.core.cpu`): the loop's stages in the driver, and per check the mutant's build, the
eager run, the compiled run's compilations and the rest of it (coverage tracing included),
collecting coverage, judging, isolation (fork, sandbox, report), the workers' messages, the
confirmation runs, background reduction and the workers' warm-up. What the account does not
cover (process start-up, the exit of forked children) is printed as "unaccounted".

Then, in this process, the limit: the kept programs of the campaign's queue (up to
`--limit-programs`), each run once eagerly and once compiled in a warm process, with no
isolation and no coverage (`mutator.runtime.execute.run_program`), by CPU. Printed last:
`campaign/limit = R`, CPU per check over the limit's CPU per program (goal: <= 5).
"""

from __future__ import annotations

import argparse
import json
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# this file's folder, not the package's, would come first on the path: its name would shadow the
# standard library's `profile`, which torch imports (through cProfile)
sys.path[0] = str(ROOT)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def campaign(out: Path, *, corpus: list[str], execs: int, jobs: int, flags: list[str],
             python: str | None) -> tuple[float, float, dict]:
    """Run the campaign; its wall seconds, its whole CPU, and its stats.json."""
    command = [sys.executable, str(ROOT / "cli.py"), "fuzz", "--out", str(out), "--max-execs", str(execs),
               "-j", str(jobs), "--seed", "1", "--no-ui", "--no-llm",
               *[arg for path in corpus for arg in ("--corpus", path)], *flags,
               *(["--python", python] if python else [])]
    before, started = children_cpu(), time.monotonic()
    with open(out.with_suffix(".log"), "w") as log:
        proc = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    wall, used = time.monotonic() - started, children_cpu() - before
    if proc.returncode != 0:
        sys.exit(f"the campaign failed (exit {proc.returncode}); see {out.with_suffix('.log')}")
    return wall, used, json.loads((out / "stats.json").read_text())


def limit(paths: list[Path]) -> list[float]:
    """CPU seconds of one eager and one compiled run of each program in this warm process."""
    import torch

    torch.set_num_threads(1)
    from mutator.core.observation import Mode, RunConfig
    from mutator.core.program import load_program
    from mutator.exec.worker import warm_up
    from mutator.runtime.execute import run_program

    warm_up()
    import gc

    gc.unfreeze()
    config, spent = RunConfig(), []
    for path in paths:
        program = load_program(path)
        started = time.process_time()
        for mode in (Mode.EAGER, Mode.COMPILED):
            run_program(program, mode, config, lambda call: None)
            torch._dynamo.reset()
        spent.append(time.process_time() - started)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", action="append", default=None, help="seeds (repeatable; default: seeds/)")
    parser.add_argument("--execs", type=int, default=400, help="checks in the campaign")
    parser.add_argument("--jobs", type=int, default=1, help="the campaign's workers")
    parser.add_argument("--flags", default="", help="more flags of mutate fuzz")
    parser.add_argument("--limit-programs", type=int, default=40, help="queue programs the limit is measured on")
    parser.add_argument("--python", default=None, help="the workers' interpreter (the torch under test)")
    parser.add_argument("--out", type=Path, default=None, help="where the campaign goes")
    args = parser.parse_args()
    out = args.out or Path(f"/tmp/mutator-profile-{int(time.time())}")
    if out.exists():
        sys.exit(f"{out}: exists; give another --out")
    corpus = args.corpus or ["seeds"]
    wall, used, stats = campaign(out, corpus=corpus, execs=args.execs, jobs=args.jobs, flags=shlex.split(args.flags),
                                 python=args.python)
    checks = max(1, int(stats["counters"]["execs"]))
    ledger = stats.get("cpu", {})
    accounted = sum(ledger.values())
    print(f"campaign: {', '.join(corpus)}; {checks} checks in {wall:.0f} s of wall clock, {args.jobs} workers; "
          f"{used:.0f} s of CPU in all (driver, workers, runs), {used / checks * 1000:.0f} ms per check")
    print(f"{'stage':58} {'CPU s':>9} {'ms/check':>9} {'share':>7}")
    rows = sorted(ledger.items(), key=lambda kv: -kv[1]) + [("unaccounted (start-up, children's exit, ...)",
                                                              max(0.0, used - accounted))]
    for line, seconds in rows:
        print(f"{line:58} {seconds:9.1f} {seconds / checks * 1000:9.1f} {seconds / max(used, 1e-9):7.1%}")
    queue = sorted((out / "queue").glob("id:*.py"))[: args.limit_programs]
    spent = limit(queue)
    per_program = statistics.fmean(spent)
    print(f"limit: {len(spent)} queue programs, one eager and one compiled run each in a warm process, no isolation "
          f"and no coverage: {per_program * 1000:.0f} ms of CPU per program (median {statistics.median(spent) * 1000:.0f})")
    print(f"campaign/limit = {used / checks / per_program:.2f}  (CPU per check over the limit's; goal <= 5)")
    print(f"checks per CPU-hour = {checks / used * 3600:.0f}")


if __name__ == "__main__":
    main()
