"""Where a campaign's CPU goes, against the physical limit of a check (issue 32).

    python bench/profile.py [--corpus seeds --corpus HARVESTED] [--execs 400] [--jobs 1]
                            [--flags "--no-reduce"] [--limit-programs 40] [--python PATH] [--out DIR]
                            [--arm NAME=[ROOT][::FLAGS] ...]

Runs one fixed-budget campaign (`mutate fuzz --max-execs N`, seed 1) as a child process and
takes its whole CPU from the operating system (the driver, its workers and every forked run
they reaped: `RUSAGE_CHILDREN`), then its own account of it by stage (stats.json's `cpu`,
`mutator.core.cpu`): the loop's stages in the driver, and per check the mutant's build, the
eager run, the compiled run's compilations and the rest of it (coverage tracing included),
collecting coverage, judging, isolation (fork, sandbox, report), the runs' report and exit
(what a forked child used beyond its own stages, from the kernel), the workers' messages, the
confirmation runs, background reduction and the workers' warm-up. What the account does not
cover (the processes' start-up, the driver's other threads) is printed as "unaccounted".

Then, in this process, the limit: the kept programs of the campaign's queue (up to
`--limit-programs`), each run once eagerly and once compiled in a warm process, with no
isolation and no coverage (`mutator.runtime.execute.run_program`), by CPU. Printed last:
`campaign/limit = R`, CPU per check over the limit's CPU per program (goal: <= 5).

With `--arm` (repeatable) it runs one such campaign per arm, one after the other, each from
the checkout ROOT names (default: this one; another worktree is "before") with `--flags` and
the arm's FLAGS: `--arm before=/work/old --arm after= --arm sampled=::"--arc-share 0.25"`. The
limit is measured once, on the first arm's queue; printed last, per arm, checks per CPU-hour
and campaign/limit side by side, and each arm's checks per CPU-hour over the first's.
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
             python: str | None, root: Path = ROOT) -> tuple[float, float, dict]:
    """Run the campaign of the checkout at `root`; its wall seconds, its whole CPU, and its stats.json."""
    command = [sys.executable, str(root / "cli.py"), "fuzz", "--out", str(out), "--max-execs", str(execs),
               "-j", str(jobs), "--seed", "1", "--no-ui", "--no-llm",
               *[arg for path in corpus for arg in ("--corpus", path)], *flags,
               *(["--python", python] if python else [])]
    before, started = children_cpu(), time.monotonic()
    with open(out.with_suffix(".log"), "w") as log:
        proc = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, cwd=root)
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


def arms(specs: list[str]) -> list[tuple[str, Path, list[str]]]:
    """(name, checkout, extra flags) of each `--arm NAME=[ROOT][::FLAGS]`; one arm, this checkout, without any."""
    if not specs:
        return [("campaign", ROOT, [])]
    found = []
    for spec in specs:
        name, _, rest = spec.partition("=")
        root_text, _, flags = rest.partition("::")
        root = Path(root_text).resolve() if root_text else ROOT
        if not name or not (root / "cli.py").is_file():
            sys.exit(f"--arm {spec}: give NAME=[ROOT][::FLAGS] with ROOT a checkout of mutator (it has cli.py)")
        found.append((name, root, shlex.split(flags)))
    return found


def stage_table(name: str, corpus: list[str], jobs: int, wall: float, used: float, stats: dict) -> int:
    """Print one campaign's CPU by stage; its checks."""
    checks = max(1, int(stats["counters"]["execs"]))
    ledger = stats.get("cpu", {})
    accounted = sum(ledger.values())
    print(f"{name}: {', '.join(corpus)}; {checks} checks in {wall:.0f} s of wall clock, {jobs} workers; "
          f"{used:.0f} s of CPU in all (driver, workers, runs), {used / checks * 1000:.0f} ms per check")
    print(f"{'stage':58} {'CPU s':>9} {'ms/check':>9} {'share':>7}")
    rows = sorted(ledger.items(), key=lambda kv: -kv[1]) + [("unaccounted (processes' start-up, ...)",
                                                              max(0.0, used - accounted))]
    for line, seconds in rows:
        print(f"{line:58} {seconds:9.1f} {seconds / checks * 1000:9.1f} {seconds / max(used, 1e-9):7.1%}")
    print()
    return checks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", action="append", default=None, help="seeds (repeatable; default: seeds/)")
    parser.add_argument("--execs", type=int, default=400, help="checks in the campaign")
    parser.add_argument("--jobs", type=int, default=1, help="the campaign's workers")
    parser.add_argument("--flags", default="", help="more flags of mutate fuzz (every arm)")
    parser.add_argument("--arm", action="append", default=[], metavar="NAME=[ROOT][::FLAGS]",
                        help="one campaign per arm, from that checkout with those flags (repeatable)")
    parser.add_argument("--limit-programs", type=int, default=40, help="queue programs the limit is measured on")
    parser.add_argument("--python", default=None, help="the workers' interpreter (the torch under test)")
    parser.add_argument("--out", type=Path, default=None, help="where the campaigns go")
    args = parser.parse_args()
    out = args.out or Path(f"/tmp/mutator-profile-{int(time.time())}")
    if out.exists():
        sys.exit(f"{out}: exists; give another --out")
    corpus = [str(Path(path).resolve()) for path in args.corpus or [str(ROOT / "seeds")]]
    results = []
    for name, root, flags in arms(args.arm):
        directory = out if not args.arm else out / name
        directory.parent.mkdir(parents=True, exist_ok=True)
        wall, used, stats = campaign(directory, corpus=corpus, execs=args.execs, jobs=args.jobs,
                                     flags=[*shlex.split(args.flags), *flags], python=args.python, root=root)
        checks = stage_table(name, corpus, args.jobs, wall, used, stats)
        results.append((name, root, directory, checks, used))
    queue = sorted((results[0][2] / "queue").glob("id:*.py"))[: args.limit_programs]
    spent = limit(queue)
    per_program = statistics.fmean(spent)
    print(f"limit: {len(spent)} queue programs, one eager and one compiled run each in a warm process, no isolation "
          f"and no coverage: {per_program * 1000:.0f} ms of CPU per program (median {statistics.median(spent) * 1000:.0f})")
    first_rate = results[0][3] / results[0][4] * 3600
    for name, root, _, checks, used in results:
        rate = checks / used * 3600
        print(f"{name:12} checks per CPU-hour = {rate:5.0f}  ({rate / first_rate:.2f}x {results[0][0]})  "
              f"campaign/limit = {used / checks / per_program:.2f}  (goal <= 5){'' if root == ROOT else f'  [{root}]'}")


if __name__ == "__main__":
    main()
