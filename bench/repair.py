"""How far repair rules go on a real campaign's invalid mutants.

    python bench/repair.py CAMPAIGN_DIR [CAMPAIGN_DIR...] [-j N]

Reads each campaign's invalid/index.jsonl (why every invalid mutant failed eagerly) and
the programs kept beside it, groups the failures by exception type and message shape,
applies the rules to each kept program (its parent from the campaign's queue) and checks
every repaired one through a warm pool, as the fuzz loop would. Prints the table the
rules were chosen by and the share repaired by rules alone.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mutator.judge.check import Checker  # noqa: E402
from mutator.mutation.operator import Mutant, Step  # noqa: E402
from mutator.core.observation import RunConfig  # noqa: E402
from mutator.exec.pool import WorkerPool  # noqa: E402
from mutator.core.program import Program, ProgramError  # noqa: E402
from mutator.repair import Repaired, RepairRequest, repair_by_rules  # noqa: E402
from mutator.core.values import ExceptionInfo, FrameInfo  # noqa: E402
from mutator.core.verdict import Verdict  # noqa: E402

_PARENT = re.compile(r"mutant_of_(\d{6})\.py")


def shape(row: dict) -> str:
    """An exception's type and message with its particulars (numbers, quoted names) left out."""
    if not row.get("type"):
        return f"({row.get('outcome')}) {row.get('reason', '')[:70]}"
    message = re.sub(r"'[^']*'", "'…'", row.get("message", ""))
    message = re.sub(r"\d+", "N", message)
    return f"{row['type']}: {message[:80]}"


def request_of(root: Path, row: dict) -> RepairRequest | None:
    if not row.get("program"):
        return None
    source = (root / "invalid" / row["program"]).read_text()
    frame = row.get("frame", "")
    parent_id = row.get("parent")
    if parent_id is None and (match := _PARENT.search(frame)):
        parent_id = int(match[1])
    name = f"mutant_of_{parent_id:06d}.py" if parent_id is not None else "mutant.py"
    try:
        program = Program.from_source(source, name)
    except ProgramError:
        return None
    parent = None
    if parent_id is not None:
        found = sorted((root / "queue").glob(f"id:{parent_id:06d},*.py"))
        parent = Program.from_source(found[0].read_text(), found[0].name) if found else None
    frames = ()
    if (match := re.match(r"(.+):(\d+) in (.+)", frame)) is not None:
        frames = (FrameInfo(match[1], int(match[2]), match[3]),)
    error = None
    if row.get("type"):
        error = ExceptionInfo(row["type"], (row["type"],), row.get("message", ""), frames)
    steps = tuple(Step(*step.split("@", 1)) if "@" in step else Step(step, "") for step in row["provenance"].split("+"))
    return RepairRequest(program, Mutant(program, steps), parent, error, row.get("outcome", ""), row.get("reason", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("campaigns", nargs="+", type=Path)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args()
    rows = [(root, row) for root in args.campaigns
            for row in (json.loads(line) for line in (root / "invalid" / "index.jsonl").read_text().splitlines()
                        if line.strip())
            if "+repair:" not in row["provenance"]]  # a repaired program that failed again is no new mutant
    by_shape: dict[str, Counter[str]] = defaultdict(Counter)
    repaired: list[tuple[str, Repaired]] = []
    for root, row in rows:
        key = shape(row)
        by_shape[key]["invalid"] += 1
        request = request_of(root, row)
        if request is None:
            by_shape[key]["no program kept"] += 1
            continue
        result = repair_by_rules(request)
        if isinstance(result, Repaired):
            by_shape[key][result.how] += 1
            repaired.append((key, result))
    valid: Counter[str] = Counter()
    if repaired:
        with WorkerPool(workers=args.jobs, config=RunConfig(timeout=60)) as pool, \
                ThreadPoolExecutor(max_workers=2 * args.jobs) as executor:
            checker = Checker(pool)
            results = list(executor.map(lambda item: checker.check(item[1].program), repaired))
        for (key, _), result in zip(repaired, results):
            if result.verdict not in (Verdict.INVALID, Verdict.UNSTABLE):
                valid[key] += 1
    print(f"{len(rows)} invalid mutants in {len(args.campaigns)} campaign(s)\n")
    print(f"{'count':>5}  {'rule made':>9}  {'valid':>5}  exception and message shape")
    for key, counts in sorted(by_shape.items(), key=lambda kv: -kv[1]["invalid"]):
        made = sum(n for k, n in counts.items() if k.startswith("rule."))
        rules = ", ".join(k for k in counts if k.startswith("rule."))
        print(f"{counts['invalid']:>5}  {made:>9}  {valid[key]:>5}  {key}" + (f"  [{rules}]" if rules else ""))
    total_valid = sum(valid.values())
    print(f"\nrules made a program for {len(repaired)} of {len(rows)}; {total_valid} of those run eagerly "
          f"(share repaired by rules alone: {total_valid / max(1, len(rows)):.0%})")


if __name__ == "__main__":
    main()
