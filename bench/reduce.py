"""Our reducer against pysource-minimize, same predicate, same warm pool, side by side.

    .venv/bin/python bench/reduce.py CAMPAIGN_DIR/findings/* [-j 2] [--limit N]

For each finding directory: the precondition once (the finding reproduces), then our
reducer and pysource-minimize on its smallest.py, each with the same predicate (the same
signature, with the eager and compiled runs ending as the original's, through the same
pool). Both start from that one precondition; ours' time includes its final confirmation.
Prints lines, tokens and seconds per finding and the medians (the goal is ours as small
or smaller, median, in at most a fifth of the time), ours per pass (candidates tried,
kept, seconds) and both reducers' candidate runs per mode. pysource-minimize is installed
into bench/.deps (not into the package's environment) on first use. Run it alone: two
cores shared with anything else halve what it measures.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import io
import statistics
import subprocess
import sys
import time
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEPS = ROOT / "bench" / ".deps"
sys.path.insert(0, str(ROOT))

from mutator.findings.finding import Finding  # noqa: E402
from mutator.core import storage  # noqa: E402
from mutator.exec.pool import WorkerPool  # noqa: E402
from mutator.core.program import Program, load_program  # noqa: E402
from mutator.reduce.problem import PassStats  # noqa: E402
from mutator.reduce.reducer import CandidateRuns, NotReproduced, Reducer, Target, admissible  # noqa: E402


def pysource_minimize():  # type: ignore[no-untyped-def]
    """The module, from bench/.deps, installed there first when it is not yet."""
    try:
        return _import_from_deps()
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target", str(DEPS),
                        "pysource-minimize==0.11.0"], check=True)
        return _import_from_deps()


def _import_from_deps():  # type: ignore[no-untyped-def]
    # A path that did not exist when first searched is remembered as holding nothing
    # (sys.path_importer_cache maps it to None): forget that, and the finders' listings.
    sys.path_importer_cache.pop(str(DEPS), None)
    importlib.invalidate_caches()
    if str(DEPS) not in sys.path:
        sys.path.insert(0, str(DEPS))
    import pysource_minimize as module
    return module


def tokens(source: str) -> int:
    skip = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT, tokenize.ENDMARKER}
    return sum(1 for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in skip)


def lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("findings", nargs="+", type=Path)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="at most this many findings")
    parser.add_argument("--time-limit", type=float, default=600.0, help="seconds per reducer and finding")
    parser.add_argument("--keep", type=Path, default=None, help="write both reduced programs of each finding here")
    parser.add_argument("--only-ours", action="store_true", help="skip pysource-minimize (no ratios)")
    args = parser.parse_args()
    minimize = None if args.only_ours else pysource_minimize().minimize
    dirs = [d for d in args.findings if (d / "finding.json").exists()][: args.limit]
    rows = []
    passes: dict[str, PassStats] = {}
    overhead = 0.0  # ours outside the passes: the final confirmation
    checking = 0.0  # ours waiting for the predicate (the rest of the passes' time is proposing candidates)
    runs = {"ours": CandidateRuns(), "theirs": CandidateRuns()}  # their candidates' runs, summed
    with WorkerPool(workers=args.jobs) as pool:
        pool.wait_ready()
        reducer = Reducer(pool, workers=pool.size)
        for directory in dirs:
            finding = Finding.from_json(storage.read_json(directory / "finding.json"))
            program = load_program(directory / "smallest.py")
            try:
                target = reducer.target(program, expect=finding.signature)
            except NotReproduced as exc:
                print(f"skip {directory.name}: {exc}", flush=True)
                continue
            started, runs_before = time.monotonic(), dataclasses.replace(reducer.runs)
            # the precondition just checked is both reducers' start; our final confirmation is counted
            ours = reducer.reduce(program, expect=finding.signature, time_limit=args.time_limit, target=target)
            ours_seconds = time.monotonic() - started
            _add_runs(runs["ours"], runs_before, reducer.runs)
            for name, stats in ours.stats.passes.items():
                total = passes.setdefault(name, PassStats())
                total.tried, total.kept = total.tried + stats.tried, total.kept + stats.kept
                total.seconds += stats.seconds
            overhead += ours_seconds - sum(stats.seconds for stats in ours.stats.passes.values())
            checking += ours.stats.checking_seconds
            row = dict(name=directory.name[:44], before=lines(program.source),
                       ours=(lines(ours.reduced.source), tokens(ours.reduced.source), ours_seconds, ours.stats.checks))
            line = f"{row['name']:44} {row['before']:4} lines | ours {_side(row['ours'])}"
            if minimize is not None:
                runs_before = dataclasses.replace(reducer.runs)
                theirs, row["theirs"] = _theirs(minimize, reducer, program, target)
                _add_runs(runs["theirs"], runs_before, reducer.runs)
                line += f" | pysource-minimize {_side(row['theirs'])}"
            rows.append(row)
            print(line, flush=True)
            if args.keep:
                (args.keep / directory.name).mkdir(parents=True, exist_ok=True)
                (args.keep / directory.name / "ours.py").write_text(ours.reduced.source)
                if minimize is not None:
                    (args.keep / directory.name / "pysource_minimize.py").write_text(theirs)
    if rows:
        _summary(rows, pool.size, passes, overhead, checking, runs)


def _add_runs(total: CandidateRuns, before: CandidateRuns, after: CandidateRuns) -> None:
    for name in ("eager", "compiled", "eager_seconds", "compiled_seconds", "eager_rejected", "compiled_rejected"):
        setattr(total, name, getattr(total, name) + getattr(after, name) - getattr(before, name))


def _theirs(minimize, reducer: Reducer, program: Program, target: Target):  # type: ignore[no-untyped-def]
    """pysource-minimize on the program with our predicate, one candidate at a time (it
    asks for one verdict before it proposes the next)."""
    checks = [0]

    def checker(source: str) -> bool:
        checks[0] += 1
        return admissible(source, program) and bool(reducer.interesting([source], target)[0])

    started = time.monotonic()
    theirs = minimize(program.source, checker)
    return theirs, (lines(theirs), tokens(theirs), time.monotonic() - started, checks[0])


def _side(side: tuple[int, int, float, int]) -> str:
    return f"{side[0]:3} lines {side[1]:4} tokens {side[2]:6.1f} s {side[3]:4} checks"


def _summary(rows: list[dict], workers: int, passes: dict[str, PassStats], overhead: float,  # type: ignore[type-arg]
             checking: float, runs: dict[str, CandidateRuns]) -> None:
    sides = [side for side in ("ours", "theirs") if side in rows[0]]
    med = {side: [statistics.median(r[side][i] for r in rows) for i in range(4)] for side in sides}
    print(f"\n{len(rows)} findings, {workers} workers; medians:")
    for side, label in (("ours", "ours:             "), ("theirs", "pysource-minimize:")):
        if side in med:
            print(f"  {label} {med[side][0]:.0f} lines, {med[side][1]:.0f} tokens, {med[side][2]:.1f} s, "
                  f"{med[side][3]:.0f} checks")
    if "theirs" in med:
        ratio = statistics.median(r["ours"][2] / max(r["theirs"][2], 1e-6) for r in rows)
        tokens_ratio = statistics.median(r["ours"][1] / max(r["theirs"][1], 1) for r in rows)
        print(f"  time ours / theirs (median per finding): {ratio:.2f}  (goal <= 0.2)")
        print(f"  tokens ours / theirs (median per finding): {tokens_ratio:.2f}  (goal <= 1.0)")
    print(f"\nours per pass, summed over the findings (tried: candidates checked; cache hits not counted):")
    print(f"  {'pass':56} {'tried':>6} {'kept':>5} {'seconds':>8}")
    for name, stats in sorted(passes.items(), key=lambda item: -item[1].seconds):
        print(f"  {name[:56]:56} {stats.tried:6} {stats.kept:5} {stats.seconds:8.1f}")
    print(f"  {'(outside the passes: the final confirmation)':56} {'':6} {'':5} {overhead:8.1f}")
    total = sum(stats.seconds for stats in passes.values())
    print(f"  of the passes' {total:.1f} s: {checking:.1f} s waiting for checks, {total - checking:.1f} s proposing "
          f"candidates (building, filtering, hashing them)")
    print("\ncandidates' runs, summed over the findings (seconds of the runs, over all workers):")
    for side in sides:
        r = runs[side]
        print(f"  {side:7} eager {r.eager:5} runs {r.eager_seconds:7.1f} s ({r.eager_rejected} ended otherwise) | "
              f"compiled {r.compiled:5} runs {r.compiled_seconds:7.1f} s ({r.compiled_rejected} ended otherwise)")


if __name__ == "__main__":
    main()
