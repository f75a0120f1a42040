"""How far harvest and the oracle agree with pytest on the same test files.

    python bench/agreement.py PYTEST_RESULTS HARVEST_JSON [--split split.json]

PYTEST_RESULTS is one JUnit XML file of `pytest --junitxml`, or a folder of them;
HARVEST_JSON is what `mutate harvest --json` printed for the same files. Tests are
matched by id: pytest's `classname` (`dynamo.test_sets.SetTests`) and `name`
(`test_add`, `test_x[1-2]`) against harvest's origin (`.../test_sets.py::SetTests::test_add`),
by file name, class and test name; what does not match exactly is listed as unmatched,
never guessed at.

What the numbers mean:
- pytest's outcome is `pass`, `fail` (a failure or an error), `skip` or `xfail`;
- ours is the verdict of the checked program (`PASS`, a bug verdict such as `MISMATCH`,
  `INVALID`, `UNSTABLE`), or what kept it from being judged: `skipped` when run,
  `compiles nothing`, `not harvested: <reason>` (skip decorators, expected failures,
  fixtures, `is_compiling()`), `failed: <reason>` (extraction or check failed), or
  `unmatched` (harvest has no test of that id);
- a test is *judged* when pytest ran it to `pass` or `fail` and we gave it `PASS` or a
  bug verdict. Agreement is the share of judged tests where pytest `pass` meets `PASS`
  and pytest `fail` meets a bug verdict. A *false alarm* is pytest `pass` with a bug
  verdict, a *miss* pytest `fail` with `PASS`; each is printed with our reason;
- a *divergence the test misses* is a bug verdict on a test whose own checks passed in
  both of our runs (harvest lists it in `divergences_the_test_misses`, with the comparison
  that saw it: order of keys, type, identity): pytest passes it because its assertions do
  not look there. It is no false alarm: it counts as agreeing with pytest on what the test
  checks, and is printed apart with the comparison;
- *valid* is the share of tests that compile something (checked, less `compiles nothing`
  and `skipped` when run, plus those that could not be made a program) whose program ran
  eagerly and stably (`PASS` or a bug verdict); the others are counted by reason.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

BUG_VERDICTS = {"MISMATCH", "CRASH", "HANG", "RECOMPILE_STORM", "FULLGRAPH_BREAK", "SPECIALIZATION",
                "BACKEND_FAILURE"}
JUDGED = ("PASS", "bug", "test misses")  # our columns of a judged test
TestId = tuple[str, str, str]  # file name, class ("" for a function), test name with parameters


@dataclass(frozen=True, slots=True)
class Ours:
    """What harvest made of one test: a verdict, or what kept it from one."""

    kind: str  # "PASS", "MISMATCH", ..., "INVALID", "UNSTABLE", "skipped", "compiles nothing", "not harvested", "failed"
    reason: str = ""
    missed: str = ""  # a bug verdict the test's own checks pass over: the comparison that saw it

    @property
    def judged(self) -> bool:
        return self.kind == "PASS" or self.kind in BUG_VERDICTS

    @property
    def column(self) -> str:
        if self.kind in BUG_VERDICTS:
            return "test misses" if self.missed else "bug"
        if self.kind in ("not harvested", "failed"):
            return f"{self.kind}: {self.reason.split(':', 1)[0].split(' (')[0]}"
        return self.kind


@dataclass
class FileTally:
    rows: Counter[tuple[str, str]] = field(default_factory=Counter)  # (pytest outcome, our column)
    disagreements: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)  # divergences the tests pytest passes miss
    invalid: Counter[str] = field(default_factory=Counter)
    compiling: int = 0
    valid: int = 0

    def add(self, other: FileTally) -> None:
        self.rows.update(other.rows)
        self.disagreements.extend(other.disagreements)
        self.missed.extend(other.missed)
        self.invalid.update(other.invalid)
        self.compiling += other.compiling
        self.valid += other.valid

    @property
    def judged(self) -> int:
        return sum(n for (outcome, column), n in self.rows.items() if outcome in ("pass", "fail") and column in JUDGED)

    @property
    def agreed(self) -> int:
        return self.rows["pass", "PASS"] + self.rows["fail", "bug"] + self.rows["pass", "test misses"] \
            + self.rows["fail", "test misses"]


def pytest_results(path: Path) -> dict[TestId, tuple[str, str]]:
    """Every test case of the JUnit XML file (or folder of them) by id, with its outcome and
    the message of its failure (or skip)."""
    files = sorted(path.glob("*.xml")) if path.is_dir() else [path]
    results: dict[TestId, tuple[str, str]] = {}
    for xml_file in files:
        for case in ET.parse(xml_file).getroot().iter("testcase"):
            results[_junit_id(case.get("classname", ""), case.get("name", ""), xml_file)] = _junit_outcome(case)
    return results


def _junit_id(classname: str, name: str, xml_file: Path) -> TestId:
    """`dynamo.test_sets.SetTests` + `test_add` -> ("test_sets.py", "SetTests", "test_add"): the
    module is the last dotted part that starts with a lower-case `test` (classes are
    capitalised), else the XML file's own stem."""
    parts = classname.split(".")
    modules = [i for i, part in enumerate(parts) if part.startswith("test")]
    if not modules:
        return f"{xml_file.stem}.py", classname, name
    return f"{parts[modules[-1]]}.py", ".".join(parts[modules[-1] + 1:]), name


def _junit_outcome(case: ET.Element) -> tuple[str, str]:
    failed = case.find("failure") if case.find("failure") is not None else case.find("error")
    if failed is not None:
        return "fail", failed.get("message", "")
    skipped = case.find("skipped")
    if skipped is not None:
        return ("xfail" if skipped.get("type") == "pytest.xfail" else "skip"), skipped.get("message", "")
    return "pass", ""


def harvest_results(report: dict) -> tuple[dict[TestId, Ours], list[str]]:
    """Every test harvest considered, by id, with what it made of it; origins that are no test id."""
    ours: dict[TestId, Ours] = {}
    odd: list[str] = []

    def put(origin: str, result: Ours) -> None:
        test_id = _origin_id(origin)
        if test_id is None:
            odd.append(origin)
        else:
            ours[test_id] = result

    for entry in report.get("not_harvested_tests", []):
        put(entry["origin"], Ours("not harvested", entry["reason"]))
    for entry in report.get("failures", []):
        put(entry["origin"], Ours("failed", entry["reason"]))
    missed = {entry["origin"]: f"{entry['comparison']}: {entry['detail']}"
              for entry in report.get("divergences_the_test_misses", [])}
    for entry in report.get("checked", []):
        outcome = entry["outcome"]
        if outcome in ("skipped", "compiles nothing"):
            put(entry["origin"], Ours(outcome, entry["reason"]))
        elif outcome != "failed":  # a failed one is in `failures` with its reason
            put(entry["origin"], Ours(entry["verdict"], entry["reason"], missed.get(entry["origin"], "")))
    return ours, odd


def _origin_id(origin: str) -> TestId | None:
    path, sep, rest = origin.partition("::")
    if not sep:
        return None
    parts = rest.split("::")
    return Path(path).name, ".".join(parts[:-1]), parts[-1]


def tally(pytest: dict[TestId, tuple[str, str]], ours: dict[TestId, Ours]) -> dict[str, FileTally]:
    by_file: dict[str, FileTally] = defaultdict(FileTally)
    for test_id, (outcome, message) in sorted(pytest.items()):
        file_tally = by_file[test_id[0]]
        mine = ours.get(test_id, Ours("unmatched"))
        file_tally.rows[outcome, mine.column] += 1
        _count_validity(file_tally, mine)
        if outcome == "pass" and mine.missed:
            test = "::".join(p for p in test_id[1:] if p)
            file_tally.missed.append(f"{test}: ours {mine.kind}, {_short(mine.missed)}")
        elif outcome in ("pass", "fail") and mine.judged and (outcome == "pass") != (mine.kind == "PASS"):
            what = "false alarm" if outcome == "pass" else "miss"
            file_tally.disagreements.append(f"{what}: {'::'.join(p for p in test_id[1:] if p)}: pytest {outcome}, "
                                            f"ours {mine.kind}: {_short(mine.reason)}"
                                            + (f"\n      pytest: {_short(message, 160)}" if message else ""))
    for test_id in sorted(set(ours) - set(pytest)):
        by_file[test_id[0]].rows["(not in pytest)", ours[test_id].column] += 1
    return dict(by_file)


def _count_validity(file_tally: FileTally, mine: Ours) -> None:
    if mine.kind in ("skipped", "compiles nothing", "not harvested", "unmatched"):
        return
    file_tally.compiling += 1
    if mine.judged:
        file_tally.valid += 1
    else:
        file_tally.invalid[f"{mine.kind}: {_kind_of(mine.reason)}"] += 1


def _kind_of(reason: str) -> str:
    """A reason's shape: its exception type or its first words, without particulars."""
    found = re.search(r"\b([A-Z]\w*(?:Error|Exception|Exit|Unsupported|Skipped))\b", reason)
    return found.group(1) if found else " ".join(reason.split()[:4])


def _short(text: str, limit: int = 220) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 3] + "..."


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def print_file(name: str, file_tally: FileTally) -> None:
    print(f"\n== {name}: judged {file_tally.judged}, agreed {file_tally.agreed} "
          f"({_pct(file_tally.agreed, file_tally.judged)}), valid programs {file_tally.valid}/{file_tally.compiling} "
          f"({_pct(file_tally.valid, file_tally.compiling)})")
    outcomes = ["pass", "fail", "skip", "xfail", "(not in pytest)"]
    columns = sorted({column for _, column in file_tally.rows},
                     key=lambda c: (["PASS", "bug", "test misses", "INVALID", "UNSTABLE"] + [c]).index(c))
    print(f"  {'pytest':<16}" + "".join(f"  {c:>{max(len(c), 4)}}" for c in columns))
    for outcome in outcomes:
        if any(file_tally.rows[outcome, c] for c in columns):
            print(f"  {outcome:<16}" + "".join(f"  {file_tally.rows[outcome, c] or '.':>{max(len(c), 4)}}"
                                               for c in columns))
    for line in file_tally.disagreements:
        print(f"  {line}")
    for line in file_tally.missed:
        print(f"  divergence the test misses: {line}")
    if file_tally.invalid:
        print("  not valid programs: " + ", ".join(f"{kind} x{n}" for kind, n in file_tally.invalid.most_common()))


def print_total(label: str, names: list[str], by_file: dict[str, FileTally]) -> None:
    total = FileTally()
    for name in names:
        if name in by_file:
            total.add(by_file[name])
    passing = sum(n for (outcome, _), n in total.rows.items() if outcome == "pass")
    passing_judged = sum(n for (outcome, column), n in total.rows.items() if outcome == "pass" and column in JUDGED)
    alarms = sum(line.startswith("false alarm") for line in total.disagreements)
    misses = len(total.disagreements) - alarms
    print(f"\n{label} ({', '.join(names)}): judged {total.judged}, agreed {total.agreed} "
          f"({_pct(total.agreed, total.judged)}), false alarms {alarms}, misses {misses}, "
          f"divergences the tests miss {len(total.missed)}, "
          f"valid programs {total.valid}/{total.compiling} ({_pct(total.valid, total.compiling)}); "
          f"judged {passing_judged} of the {passing} items pytest passes ({_pct(passing_judged, passing)})")
    not_judged = Counter()
    for (outcome, column), n in total.rows.items():
        if not (outcome in ("pass", "fail") and column in JUDGED):
            not_judged[f"pytest {outcome} / ours {column}"] += n
    print("  not judged: " + ", ".join(f"{k} x{n}" for k, n in sorted(not_judged.items())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pytest_results", type=Path, help="a JUnit XML file of pytest, or a folder of them")
    parser.add_argument("harvest_json", type=Path, help="what `mutate harvest --json` printed")
    parser.add_argument("--split", type=Path, help='JSON object of named lists of file names: {"TUNE": [...], ...}')
    args = parser.parse_args(argv)
    pytest = pytest_results(args.pytest_results)
    ours, odd = harvest_results(json.loads(args.harvest_json.read_text()))
    by_file = tally(pytest, ours)
    for name in sorted(by_file):
        print_file(name, by_file[name])
    if odd:
        print(f"\nharvest origins that are no test id (scripts): {len(odd)}")
    halves = json.loads(args.split.read_text()) if args.split else {"ALL": sorted(by_file)}
    for label, names in halves.items():
        print_total(label, names, by_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
