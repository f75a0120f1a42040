"""What recording torch/_dynamo arcs costs: compiled runs through the pool, tracer on vs off.

Both pools have one worker and run the same passing seeds in compiled mode, alternating
so that machine noise hits both alike. Prints per-run medians and their ratio.

    python bench/coverage_cost.py [--programs 20] [--include torch/_dynamo --include torch/fx]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.throughput import passing_seeds  # noqa: E402
from mutator.core.features import arc_count  # noqa: E402
from mutator.core.observation import Mode  # noqa: E402
from mutator.exec.pool import WorkerPool  # noqa: E402
from mutator.core.program import load_program  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=20)
    parser.add_argument("--include", action="append", default=None)
    parser.add_argument("--seeds", type=Path, default=ROOT / "seeds")
    args = parser.parse_args()
    includes = tuple(args.include or ["torch/_dynamo"])
    programs = [load_program(p) for p in passing_seeds(args.seeds, args.programs)]
    with WorkerPool(workers=1) as plain, WorkerPool(workers=1, coverage=includes) as traced:
        plain.wait_ready()
        traced.wait_ready()
        off, on, arcs = [], [], []
        for program in programs:
            off.append(plain.run(program, Mode.COMPILED).seconds)
            result = traced.run(program, Mode.COMPILED)
            on.append(result.seconds)
            arcs.append(arc_count(result.features))
    print(f"{len(programs)} passing seeds, compiled runs, tracing {', '.join(includes)}")
    print(f"  tracer off  {statistics.median(off) * 1000:7.1f} ms per run (median)")
    print(f"  tracer on   {statistics.median(on) * 1000:7.1f} ms per run (median), "
          f"{statistics.median(arcs):.0f} arcs beyond the warm-up per run (median)")
    print(f"  on / off = {statistics.median(on) / statistics.median(off):.2f}")


if __name__ == "__main__":
    main()
