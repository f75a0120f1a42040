"""Our reducer against pysource-minimize, same predicate, same warm pool, side by side.

    .venv/bin/python bench/reduce.py CAMPAIGN_DIR/findings/* [-j 2] [--limit N]

For each finding directory: the precondition once (the finding reproduces), then our
reducer and pysource-minimize on its smallest.py, each with the same predicate (the same
signature, with the eager and compiled runs ending as the original's, through the same
pool). Prints lines, tokens and seconds per finding and the medians; the goal is ours as
small or smaller (median) in at most a fifth of the time. pysource-minimize is installed
into bench/.deps (not into the package's environment) on first use. Run it alone: two
cores shared with anything else halve what it measures.
"""

from __future__ import annotations

import argparse
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

from mutator.findings import Finding  # noqa: E402
from mutator import storage  # noqa: E402
from mutator.exec.pool import WorkerPool  # noqa: E402
from mutator.program import load_program  # noqa: E402
from mutator.reduce.reducer import NotReproduced, Reducer, admissible  # noqa: E402


def pysource_minimize():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(DEPS))
    try:
        import pysource_minimize as module
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target", str(DEPS),
                        "pysource-minimize==0.11.0"], check=True)
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
    args = parser.parse_args()
    minimize = pysource_minimize().minimize
    dirs = [d for d in args.findings if (d / "finding.json").exists()][: args.limit]
    rows = []
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
            started = time.monotonic()
            ours = reducer.reduce(program, expect=finding.signature, time_limit=args.time_limit)
            ours_seconds = time.monotonic() - started
            checks = [0]

            def checker(source: str) -> bool:
                checks[0] += 1
                return admissible(source, program) and reducer.interesting([source], target)[0]

            started = time.monotonic()
            theirs = minimize(program.source, checker)
            theirs_seconds = time.monotonic() - started
            row = dict(name=directory.name[:44], before=lines(program.source),
                       ours=(lines(ours.reduced.source), tokens(ours.reduced.source), ours_seconds, ours.stats.checks),
                       theirs=(lines(theirs), tokens(theirs), theirs_seconds, checks[0]))
            rows.append(row)
            print(f"{row['name']:44} {row['before']:4} lines | ours {row['ours'][0]:3} lines {row['ours'][1]:4} tokens "
                  f"{row['ours'][2]:6.1f} s {row['ours'][3]:4} checks | pysource-minimize {row['theirs'][0]:3} lines "
                  f"{row['theirs'][1]:4} tokens {row['theirs'][2]:6.1f} s {row['theirs'][3]:4} checks", flush=True)
            if args.keep:
                (args.keep / directory.name).mkdir(parents=True, exist_ok=True)
                (args.keep / directory.name / "ours.py").write_text(ours.reduced.source)
                (args.keep / directory.name / "pysource_minimize.py").write_text(theirs)
    if not rows:
        return
    med = {side: [statistics.median(r[side][i] for r in rows) for i in range(4)] for side in ("ours", "theirs")}
    print(f"\n{len(rows)} findings, {pool.size} workers; medians:")
    print(f"  ours:              {med['ours'][0]:.0f} lines, {med['ours'][1]:.0f} tokens, {med['ours'][2]:.1f} s, "
          f"{med['ours'][3]:.0f} checks")
    print(f"  pysource-minimize: {med['theirs'][0]:.0f} lines, {med['theirs'][1]:.0f} tokens, {med['theirs'][2]:.1f} s, "
          f"{med['theirs'][3]:.0f} checks")
    ratio = statistics.median(r["ours"][2] / max(r["theirs"][2], 1e-6) for r in rows)
    tokens_ratio = statistics.median(r["ours"][1] / max(r["theirs"][1], 1) for r in rows)
    print(f"  time ours / theirs (median per finding): {ratio:.2f}  (goal <= 0.2)")
    print(f"  tokens ours / theirs (median per finding): {tokens_ratio:.2f}  (goal <= 1.0)")


if __name__ == "__main__":
    main()
