"""Two synced instances against one, at equal total CPU and checks, side by side in one run.

One instance with two workers checks N programs (`mutate fuzz -j 2 --max-execs N`); then
two instances with one worker each share a sync directory (`--sync-dir --name a|b -j 1
--max-execs N/2`, different RNG seeds) and run at the same time. Both configurations start
from the same seeds, and each instance does its own dry run of them (as AFL's do), which
the pair pays twice. Printed: checks, wall time, arcs of torch/_dynamo covered (for the
pair, the union of both maps), distinct finding signatures (for the pair, the union), and
what the pair's instances took from each other.

    python bench/sync.py [--checks 400] [--seeds seeds/] [--sync-every 30s]

Run it alone on the machine: it uses both cores.
"""

from __future__ import annotations

import argparse
import json
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mutator.core.features import is_arc  # noqa: E402
from mutator.findings.store import FindingStore  # noqa: E402

_PAIR = struct.Struct("<qq")


def fuzz(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "fuzz", "--no-ui", "--no-reduce", "--no-llm",
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


def finish(proc: subprocess.Popen[str]) -> None:
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"mutate fuzz failed ({proc.returncode}):\n{err[-3000:]}")


def arcs(campaign: Path) -> set[int]:
    data = (campaign / "coverage.bin").read_bytes()
    return {f for f, _ in _PAIR.iter_unpack(data) if is_arc(f)}


def signatures(campaign: Path) -> set[object]:
    return {s for s, f in FindingStore(campaign).findings.items() if not f.known_from}


def counters(campaign: Path) -> dict[str, object]:
    stats = json.loads((campaign / "stats.json").read_text())
    return {**stats["counters"], **{k: stats["snapshot"].get(k) for k in ("corpus", "sync")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checks", type=int, default=400, help="checks per configuration, seeds included")
    parser.add_argument("--seeds", type=Path, default=ROOT / "seeds")
    parser.add_argument("--sync-every", default="30s")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mutator-sync-") as tmp:
        root = Path(tmp)
        started = time.monotonic()
        finish(fuzz("--corpus", str(args.seeds), "--out", str(root / "single"), "-j", "2",
                    "--max-execs", str(args.checks), "--seed", "1"))
        single_wall = time.monotonic() - started
        started = time.monotonic()
        pair = [fuzz("--corpus", str(args.seeds), "--sync-dir", str(root / "pair"), "--name", name, "-j", "1",
                     "--max-execs", str(args.checks // 2), "--seed", str(seed), "--sync-every", args.sync_every)
                for name, seed in (("a", 1), ("b", 2))]
        for proc in pair:
            finish(proc)
        pair_wall = time.monotonic() - started
        single = root / "single"
        a, b = root / "pair" / "a", root / "pair" / "b"
        one, first, second = counters(single), counters(a), counters(b)
        rows = [
            ("one instance, 2 workers", one["execs"], single_wall, len(arcs(single)), len(signatures(single)),
             one["corpus"], ""),
            ("two synced, 1 worker each", first["execs"] + second["execs"], pair_wall, len(arcs(a) | arcs(b)),
             len(signatures(a) | signatures(b)), f"{first['corpus']} + {second['corpus']}",
             f"took {first['sync']['imported']} + {second['sync']['imported']} entries from each other"),
        ]
    print(f"{args.checks} checks per configuration (seeds included), seeds from {args.seeds}")
    print(f"{'':28} {'checks':>7} {'wall s':>7} {'arcs':>6} {'signatures':>11} {'corpus':>11}")
    for name, checks, wall, arc_count, sigs, corpus, extra in rows:
        print(f"{name:28} {checks:7d} {wall:7.0f} {arc_count:6d} {sigs:11d} {corpus!s:>11}  {extra}")
    print(f"arcs pair/one = {rows[1][3] / max(1, rows[0][3]):.2f}, signatures pair/one = "
          f"{rows[1][4] / max(1, rows[0][4]):.2f}")


if __name__ == "__main__":
    main()
