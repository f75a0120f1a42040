"""Do mutants reach Dynamo code the seeds do not? Graph-break types and verdicts, seeds vs mutants.

Checks every seed, then N mutants of randomly chosen seeds (the shipped operators, no
coverage feedback), through the pool, and prints the distinct graph-break types and
the verdicts each set produced.

    python bench/reach.py [--mutants 300] [--seeds seeds/] [-j 2]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mutator.judge.check import Checker  # noqa: E402
from mutator.mutation.mutator import Mutator  # noqa: E402
from mutator.mutation.registry import all_operators  # noqa: E402
from mutator.exec.pool import WorkerPool  # noqa: E402
from mutator.core.program import load_programs  # noqa: E402


def survey(checker: Checker, programs, workers: int) -> tuple[set[str], Counter]:
    with ThreadPoolExecutor(max_workers=2 * workers) as executor:
        results = list(executor.map(checker.check, programs))
    breaks: set[str] = set()
    for r in results:
        stats = r.compiled.observation.compile
        if stats is not None:
            breaks.update(stats.graph_breaks)
    return breaks, Counter(r.verdict.name for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mutants", type=int, default=300)
    parser.add_argument("--seeds", type=Path, default=ROOT / "seeds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-j", "--jobs", type=int, default=None)
    args = parser.parse_args()
    seeds, errors = load_programs([args.seeds])
    assert not errors, errors
    rng, mutator = random.Random(args.seed), Mutator(all_operators())
    mutants = []
    while len(mutants) < args.mutants:
        mutant = mutator.mutate(rng.choice(seeds), rng)
        if mutant is not None:
            mutants.append(mutant.program)
    with WorkerPool(workers=args.jobs) as pool:
        checker = Checker(pool)
        seed_breaks, seed_verdicts = survey(checker, seeds, pool.size)
        mutant_breaks, mutant_verdicts = survey(checker, mutants, pool.size)
    print(f"{len(seeds)} seeds: {len(seed_breaks)} graph-break types, verdicts {dict(seed_verdicts)}")
    print(f"{len(mutants)} mutants: {len(mutant_breaks)} graph-break types "
          f"({len(mutant_breaks - seed_breaks)} the seeds never hit), verdicts {dict(mutant_verdicts)}")
    print(f"distinct verdicts: seeds {len(seed_verdicts)}, mutants {len(mutant_verdicts)}")
    for gb in sorted(mutant_breaks - seed_breaks):
        print(f"  new: {gb}")


if __name__ == "__main__":
    main()
