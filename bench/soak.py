"""Kill -9 soak: start `mutate fuzz`, SIGKILL it at a random moment, resume, and again.

After every kill: no finding lost (every finding directory seen before is there, its hits
never lower), every JSON file parses, no counter of stats.json went backwards, and no
process of the campaign (driver, workers, runs) is left running. After the last kill the
campaign is resumed to a clean end: the queue and the counters agree, no temporary file
remains. Prints one line per kill and a summary; exit status 1 when anything was lost.

    python bench/soak.py [--kills 20] [--seeds seeds/] [--seed 0] [--keep DIR]

tests/integration/test_soak.py runs the same with 3 kills.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARK = "MUTATOR_SOAK"  # in the environment of every process of the soaked campaign


@dataclass
class Soak:
    """What the soak saw; `problems` is empty when nothing was lost."""

    kills: list[str] = field(default_factory=list)  # one line per kill
    problems: list[str] = field(default_factory=list)
    findings: int = 0
    execs: int = 0


def soak(seeds: Path, root: Path, *, kills: int, rng: random.Random, jobs: int = 2,
         log=None) -> Soak:  # type: ignore[no-untyped-def]
    out, mark = root / "campaign", uuid.uuid4().hex
    seen: dict[str, int] = {}  # finding directory -> hits
    before: dict[str, float] = {}
    result = Soak()
    for n in range(kills + 1):
        last = n == kills
        args = (["--corpus", str(seeds)] if n == 0 else ["--resume"]) + \
            ["--max-execs", "6" if last else "100000"]
        proc = _start(out, args, mark=mark, jobs=jobs, stderr=root / f"stderr-{n}.txt")
        if last:
            if proc.wait(timeout=900) != 0:
                result.problems.append(f"the last resume exited {proc.returncode}: "
                                       f"{(root / f'stderr-{n}.txt').read_text()[-500:]}")
        else:
            moment = _wait_under_way(proc, out, before.get("execs", 0)) + rng.uniform(0, 5)
            while time.monotonic() < moment and proc.poll() is None:
                time.sleep(0.05)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        orphans = _survivors(mark)
        now = _read(out, result.problems, n)
        for name, hits in seen.items():
            if name not in now["findings"]:
                result.problems.append(f"kill {n}: finding {name} is gone")
            elif now["findings"][name] < hits:
                result.problems.append(f"kill {n}: finding {name} went from {hits} to {now['findings'][name]} hits")
        for key, value in before.items():
            if now["counters"].get(key, 0) < value:
                result.problems.append(f"kill {n}: counter {key} went from {value} to {now['counters'].get(key)}")
        if orphans:
            result.problems.append(f"kill {n}: {len(orphans)} processes of the campaign still running: {orphans[:5]}")
        seen = {**seen, **now["findings"]}
        before = {k: v for k, v in now["counters"].items() if isinstance(v, (int, float))}
        line = (f"{'end' if last else f'kill {n + 1}'}: execs {now['counters'].get('execs', 0)}, "
                f"findings {len(now['findings'])}, hits {sum(now['findings'].values())}, orphans {len(orphans)}")
        result.kills.append(line)
        if log:
            print(line, file=log, flush=True)
    counters = _read(out, result.problems, kills)["counters"]
    queue = list((out / "queue").glob("id:*.json"))
    if counters.get("kept") != len(queue):
        result.problems.append(f"at the end, kept {counters.get('kept')} but {len(queue)} entries in queue/")
    if counters.get("hits") != sum(seen.values()):
        result.problems.append(f"at the end, hits {counters.get('hits')} but the findings hold {sum(seen.values())}")
    if list(out.rglob(".*.tmp")):
        result.problems.append("temporary files left after a clean end")
    result.findings, result.execs = len(seen), int(counters.get("execs", 0))
    return result


def _start(out: Path, args: list[str], *, mark: str, jobs: int, stderr: Path) -> subprocess.Popen:  # type: ignore[type-arg]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RAY_"))}
    env[MARK] = mark
    with stderr.open("w") as err:
        return subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "fuzz", "--no-ui", "--no-reduce", "-j", str(jobs),
                                 "--out", str(out), *args], stdout=subprocess.DEVNULL, stderr=err, cwd=ROOT,
                                env=env, start_new_session=True)


def _wait_under_way(proc: subprocess.Popen, out: Path, execs: float, timeout: float = 600) -> float:  # type: ignore[type-arg]
    """When the campaign has checked a program more than the last session left (its workers
    are warm, it writes): the earliest moment a kill tells something."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if json.loads((out / "stats.json").read_text())["counters"]["execs"] > execs:
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.2)
    return time.monotonic()


def _read(out: Path, problems: list[str], n: int) -> dict:  # type: ignore[type-arg]
    for path in out.rglob("*.json"):
        if path.name.startswith("."):
            continue
        try:
            json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            problems.append(f"kill {n}: {path.relative_to(out)} does not parse ({exc})")
    findings = {}
    for path in out.glob("*/*/finding.json"):
        try:
            findings[path.parent.name] = json.loads(path.read_text())["hits"]
        except (OSError, ValueError, KeyError):
            pass
    try:
        counters = json.loads((out / "stats.json").read_text())["counters"]
    except (OSError, ValueError, KeyError):
        counters = {}
    return {"findings": findings, "counters": counters}


def _survivors(mark: str, wait: float = 10.0) -> list[int]:
    """Processes whose environment carries `mark`, after giving them `wait` seconds to die
    (a worker's children die when it does, a run's when its child does)."""
    deadline = time.monotonic() + wait
    while True:
        found = []
        needle = f"{MARK}={mark}".encode()
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if needle not in f.read():
                        continue
                with open(f"/proc/{entry}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        continue
            except OSError:
                continue
            found.append(int(entry))
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seeds", type=Path, default=ROOT / "seeds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, default=None, help="Keep the campaign in this (new) directory.")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="mutator-soak-"))
    root.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    result = soak(args.seeds, root, kills=args.kills, rng=random.Random(args.seed), log=sys.stdout)
    print(f"{args.kills} kills in {time.monotonic() - started:.0f} s: {result.execs} execs, {result.findings} findings; "
          f"lost: {len(result.problems)}")
    for problem in result.problems:
        print("  " + problem)
    sys.exit(1 if result.problems else 0)


if __name__ == "__main__":
    main()
