"""The local pool against Ray actors: the same campaign, the same budget, side by side in one run.

Runs `mutate fuzz --max-execs N -j J --seed S` from the same seeds twice, once on the local
warm pool and once with `--ray` (a local Ray instance that `mutate fuzz` starts itself,
loopback only), one after the other so that neither shares the cores with the other.
Printed per engine: checks, wall seconds of the whole command (start-up of Ray and of the
workers or actors, each importing torch, included), checks per second over that wall
time and over the campaign once checks flow (from its first save of plot_data.csv to its
last), and arcs and finding signatures at the end. Last line: `ray/pool = R`, the checks
per second of Ray over the pool's once checks flow.

    python bench/executors.py [--checks 400] [--seeds seeds/] [-j 2]

Run it alone on the machine: it uses every core. Needs the ray extra (`pip install -e '.[ray]'`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from sync import arcs, signatures  # noqa: E402  (bench/sync.py)


def campaign(out: Path, *, seeds: Path, checks: int, jobs: int, ray: bool) -> dict[str, float]:
    """One `mutate fuzz` session; what its stats.json and plot_data.csv say of its speed."""
    command = [sys.executable, str(ROOT / "cli.py"), "fuzz", "--no-ui", "--no-reduce", "--no-llm",
               "--corpus", str(seeds), "--out", str(out), "-j", str(jobs), "--max-execs", str(checks),
               "--seed", "1", *(["--ray"] if ray else [])]
    started = time.monotonic()
    proc = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    counters = json.loads((out / "stats.json").read_text())["counters"]
    rows = [line.split(",") for line in (out / "plot_data.csv").read_text().splitlines()[1:]]
    flowing = [(float(row[0]), int(row[1])) for row in rows if int(row[1]) > 0]
    (first_elapsed, first_execs), (last_elapsed, last_execs) = flowing[0], flowing[-1]
    return {
        "checks": int(counters["execs"]),
        "wall": wall,
        "overall": int(counters["execs"]) / wall,
        "rate": (last_execs - first_execs) / max(1e-9, last_elapsed - first_elapsed),
        "arcs": len(arcs(out)),
        "signatures": len(signatures(out)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checks", type=int, default=400, help="checks per engine, seeds included")
    parser.add_argument("--seeds", type=Path, default=ROOT / "seeds")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mutator-executors-") as tmp:
        results = {name: campaign(Path(tmp) / name, seeds=args.seeds, checks=args.checks, jobs=args.jobs,
                                  ray=name == "ray")
                   for name in ("pool", "ray")}
    print(f"{args.checks} checks per engine (seeds included), {args.jobs} workers, seeds from {args.seeds}")
    print(f"{'':6} {'checks':>7} {'wall s':>7} {'checks/s (wall)':>16} {'checks/s (flowing)':>19} {'arcs':>6} "
          f"{'signatures':>10}")
    for name, r in results.items():
        print(f"{name:6} {r['checks']:7d} {r['wall']:7.0f} {r['overall']:16.2f} {r['rate']:19.2f} {r['arcs']:6d} "
              f"{r['signatures']:10d}")
    print(f"ray/pool = {results['ray']['rate'] / results['pool']['rate']:.2f}")


if __name__ == "__main__":
    main()
