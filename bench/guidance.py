"""Does coverage guidance pay? The same loop with and without feedback, at equal executions.

Guided: the fuzz loop as shipped (a power schedule, mutants that add features are kept,
operator usefulness fed back; one row per --schedule). Unguided: the same loop with coverage feedback off
(uniform choice among the seeds, nothing kept, no usefulness feedback). Both start
from the same seeds with the same RNG seed, run the same number of checks through the
same pool, one after the other, and are measured alike: distinct arcs of torch/_dynamo
(all, and beyond what the seeds' dry run covered), distinct graph-break types,
distinct finding signatures.

    python bench/guidance.py [--execs 300] [--schedule fast --schedule rare] [--seeds seeds/ --seeds harvested/] [-j 2]

`--seeds` is repeatable: with a harvested corpus beside the shipped seeds, compare the
total arcs (the ceiling) with a run from the seeds alone; "new arcs" count from each
run's own dry run.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mutator.campaign.directory import Campaign, CampaignConfig  # noqa: E402
from mutator.judge.check import Checker, CheckResult  # noqa: E402
from mutator.campaign.corpus import Corpus, CoverageMap  # noqa: E402
from mutator.core.features import is_arc  # noqa: E402
from mutator.findings.store import FindingStore  # noqa: E402
from mutator.campaign.filing import Filing  # noqa: E402
from mutator.campaign.fuzzer import Budget, Fuzzer  # noqa: E402
from mutator.campaign.lanes.repair import RepairLane  # noqa: E402
from mutator.mutation.mutator import Mutator  # noqa: E402
from mutator.mutation.registry import all_operators  # noqa: E402
from mutator.exec.pool import WorkerPool  # noqa: E402
from mutator.core.program import load_programs  # noqa: E402
from mutator.campaign.schedule import SCHEDULES  # noqa: E402


CHECKPOINTS = (50, 100, 200, 400, 800, 1600, 3200, 6400)


class RecordingChecker(Checker):
    """Remembers every graph-break type the compiled runs reported."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.graph_breaks: set[str] = set()

    def check(self, program):  # type: ignore[no-untyped-def]
        result: CheckResult = super().check(program)
        stats = result.compiled.observation.compile
        if stats is not None:
            self.graph_breaks.update(stats.graph_breaks)
        return result


def campaign_run(name: str, *, schedule: str, seeds, pool, out: Path, execs: int, rng_seed: int) -> dict:
    guided = name != "unguided"
    campaign = Campaign.create(out / name, CampaignConfig(corpus=("seeds",), schedule=schedule))
    checker = RecordingChecker(pool)
    fuzzer = Fuzzer(corpus=Corpus(), coverage=CoverageMap(), mutator=Mutator(all_operators()),
                    schedule=SCHEDULES[schedule](), checker=checker,
                    filing=Filing(FindingStore(campaign.root)), campaign=campaign, lanes=[RepairLane()],
                    rng=random.Random(rng_seed),
                    feedback=guided, inflight=2 * pool.size)
    fuzzer.seed(seeds)
    seed_arcs = {f for f in fuzzer.coverage.hits if is_arc(f)}
    seed_breaks = set(checker.graph_breaks)
    base = fuzzer.session_execs
    curve: dict[int, int] = {}  # mutant checks done -> new arcs by then (the growth curve)
    totals: dict[int, int] = {}  # mutant checks done -> all arcs by then

    def progress(_snapshot: dict) -> None:
        done = fuzzer.session_execs - base
        mark = next((m for m in CHECKPOINTS if m <= done and m not in curve), None)
        if mark is not None:
            arcs_now = {f for f in fuzzer.coverage.hits if is_arc(f)}
            curve[mark] = len(arcs_now - seed_arcs)
            totals[mark] = len(arcs_now)

    started = time.monotonic()
    fuzzer.run(Budget(max_execs=execs), on_progress=progress)
    seconds = time.monotonic() - started
    campaign.close()
    arcs = {f for f in fuzzer.coverage.hits if is_arc(f)}
    return dict(
        name=name, execs=fuzzer.session_execs - len(seeds), seconds=seconds, arcs=len(arcs),
        new_arcs=len(arcs - seed_arcs), seed_arcs=len(seed_arcs), graph_breaks=len(checker.graph_breaks),
        new_graph_breaks=len(checker.graph_breaks - seed_breaks), signatures=len(fuzzer.store.findings),
        kinds=fuzzer.store.count_by_kind(), corpus=len(fuzzer.corpus), invalid=fuzzer.stats.invalid, curve=curve,
        totals=totals,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--execs", type=int, default=300, help="mutant checks per loop (after the dry run)")
    parser.add_argument("--seeds", type=Path, action="append", default=None,
                        help="seed programs (repeatable; default: the shipped seeds)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-j", "--jobs", type=int, default=None)
    parser.add_argument("--schedule", action="append", choices=sorted(SCHEDULES), default=None,
                        help="schedules of the guided loop (repeatable; default: rare)")
    parser.add_argument("--only", default=None, help="run only the loop of this name (guided:rare, unguided)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep each loop's campaign directory (its findings) under this new directory")
    args = parser.parse_args()
    loops = [(f"guided:{s}", s) for s in (args.schedule or ["rare"])] + [("unguided", "uniform")]
    loops = [loop for loop in loops if args.only in (None, loop[0])]
    seeds, errors = load_programs(args.seeds or [ROOT / "seeds"])
    assert not errors, errors
    with tempfile.TemporaryDirectory(prefix="mutator-guidance-") as tmp, \
            WorkerPool(workers=args.jobs, coverage=("torch/_dynamo",)) as pool:
        pool.wait_ready()
        out = args.keep or Path(tmp)
        rows = [campaign_run(name, schedule=schedule, seeds=seeds, pool=pool, out=out, execs=args.execs,
                             rng_seed=args.seed) for name, schedule in loops]
    print(f"{len(seeds)} seeds, {args.execs} mutant checks per loop, {pool.size} workers")
    header = f"{'':14} {'execs/s':>8} {'arcs':>7} {'new arcs':>9} {'gb types':>9} {'new gb':>7} " \
             f"{'signatures':>11} {'corpus':>7} {'invalid':>8}  findings by kind"
    print(header)
    for r in rows:
        print(f"{r['name']:14} {r['execs'] / r['seconds']:8.2f} {r['arcs']:7d} {r['new_arcs']:9d} "
              f"{r['graph_breaks']:9d} {r['new_graph_breaks']:7d} {r['signatures']:11d} {r['corpus']:7d} "
              f"{r['invalid']:8d}  {r['kinds']}")
    marks = [m for m in CHECKPOINTS if all(m in r["curve"] for r in rows)]
    print("new arcs after N mutant checks: " + "  ".join(f"{m:>6}" for m in marks))
    for r in rows:
        print(f"  {r['name']:<29}" + "  ".join(f"{r['curve'][m]:6d}" for m in marks))
    print("all arcs after N mutant checks:  " + "  ".join(f"{m:>6}" for m in marks))
    for r in rows:
        print(f"  {r['name']:<29}" + "  ".join(f"{r['totals'][m]:6d}" for m in marks))
    unguided = rows[-1]
    for guided in rows[:-1] if unguided["name"] == "unguided" else []:
        print(f"new arcs, {guided['name']} / unguided: {guided['new_arcs'] / max(1, unguided['new_arcs']):.2f}"
              "  (goal >= 1.5)")


if __name__ == "__main__":
    main()
