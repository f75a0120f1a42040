"""How many distinct bugs a CPU-hour buys, measured as FuzzBench measures fuzzers.

    python bench/yield.py --config guided --config unguided [--trials 3] [--cpu-minutes 15]
                          [--corpus seeds --corpus HARVESTED] [--known DIR ...] [--out DIR]
                          [--parallel 2] [--python PATH] [--config-root NAME=PATH]
    python bench/yield.py --returning [--first-config today] [--first-python PATH]
                          --config today --config axis --config axis-no-rejudge --config axis-no-avoid ...

Each configuration runs `--trials` campaigns (`mutate fuzz`, RNG seeds 1..N) for the same
CPU budget (`--jobs` workers each, one by default, `--parallel` trials at a time: a trial's
CPU-minutes are its wall-clock minutes times its workers). A configuration whose flags name
a `--corpus` fuzzes that instead of the common one (to compare corpora). Afterwards every frontend finding of every trial is reduced (`mutate
reduce`, with what matters), and each trial is counted: distinct root causes (its findings'
confirmed reduced programs by canonical form, then those of one signature kind whose
what-matters analyses found the same constructs needed taken as one), how many of them are
new against `--known` (a finding known by signature, or reduced to a known program, is not:
what a returning user sees), how many no seed showed in the dry run (what the fuzzing itself
found: every configuration dry-runs the same seeds), frontend signatures, arcs of
`torch/_dynamo`. Printed: mean,
standard deviation, min and max per configuration, side by side; the discovery curve (distinct
root causes against CPU-minutes, each trial's, from when each root cause's first finding was
found) as a PNG; each configuration's checks and distinct root causes per CPU-hour and their
ratios to the first configuration's (`--config before= --config-root before=CHECKOUT --config
after=`: a change's speed and yield side by side); and, last, `yield guided/unguided = R` on
distinct reduced root causes.

`--returning` measures what a returning user gets: first one ordinary campaign of the same
corpus and budget (`--first-config`, today's default unless told; on the torch of
`--first-python`, an earlier release say, else the same), reduced; then every trial runs
with it as `--known`, and what is counted, and drawn, is the new distinct reduced root causes
(against it): `new/CPU-hour` per configuration, and `new yield axis/today = R`.

Configurations (`--config NAME`, repeatable; `NAME=FLAGS` defines one of your own, `NAME=` is
the one as shipped under another name):
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mutator.core.verdict import Verdict  # noqa: E402
from mutator.findings.canonical import canonical_digest  # noqa: E402
from mutator.findings.finding import Finding  # noqa: E402
from mutator.findings.known import KnownBugs  # noqa: E402
from mutator.findings.store import FindingStore  # noqa: E402
from mutator.findings.needs import failure_key, needed_constructs, only_configurations  # noqa: E402

CONFIGS = {  # name -> the extra flags of `mutate fuzz`
    "guided": [],  # the default: arcs of torch/_dynamo and Dynamo's own signals (mutator.runtime.signals)
    "arcs": ["--coverage-include", "torch/_dynamo"],  # arcs alone, the default until batch 1 below
    "unguided": ["--schedule", "uniform", "--no-feedback"],  # uniform choice, nothing kept beyond the seeds
    "no-splice": ["--no-splice"],
    "signals": ["--coverage-include", "torch/_dynamo", "--coverage-include", "dynamo-signals"],  # = guided
    "fast": ["--schedule", "fast"],
    # issue 30: Dynamo's configurations as an axis, and what it does with bugs known already
    # before the axis: one configuration, known bugs as filed, confirmed like any hit, not avoided
    "today": ["--configs", "default", "--no-rejudge-known", "--confirm-known", "--no-avoid-known"],
    "axis": [],  # the default now: every configuration, known programs judged again, known bugs avoided
    "axis-no-rejudge": ["--no-rejudge-known"],
    "axis-no-avoid": ["--no-avoid-known"],
    "axis-no-sweep": ["--sweep-share", "0"],  # mutants take every configuration; no entry is checked again as it is
    # issue 32: arcs recorded in a quarter of the mutants' checks (coverage.py's tracer, Python 3.10 and 3.11)
    "sampled-arcs": ["--arc-share", "0.25"],
}
__doc__ += "".join(f"    {name:12} mutate fuzz {' '.join(flags) or '(as shipped)'}\n" for name, flags in CONFIGS.items())


@dataclass
class Trial:
    config: str
    seed: int
    directory: Path
    wall_seconds: float = 0.0
    returncode: int | None = None
    causes: list[dict[str, Any]] = field(default_factory=list)  # one per distinct root cause, earliest finding's time
    frontend_signatures: int = 0
    arcs: int = 0
    execs: int = 0
    unreduced: int = 0  # frontend findings whose reduction did not confirm (counted by signature)

    @property
    def new_causes(self) -> int:
        return sum(1 for cause in self.causes if not cause["known"])

    @property
    def mutant_causes(self) -> int:
        """Root causes no seed showed in the dry run: what fuzzing itself found."""
        return sum(1 for cause in self.causes if not cause["seed"])


def mutate(python: str, root: Path = ROOT) -> list[str]:
    return [python, str(root / "cli.py")]


def run_trial(trial: Trial, *, flags: list[str], corpus: list[str], seconds: float, python: str,
              worker_python: str | None, jobs: int = 1, root: Path = ROOT) -> Trial:
    """One campaign; `root`: the checkout whose mutator fuzzes (its driver and its workers)."""
    own_corpus = "--corpus" in flags
    command = [*mutate(python, root), "fuzz", "--out", str(trial.directory), "--time", f"{seconds:.0f}s",
               "-j", str(jobs),
               "--seed", str(trial.seed), "--no-ui", "--no-reduce", "--no-llm",
               *([] if own_corpus else [arg for path in corpus for arg in ("--corpus", path)]), *flags,
               *(["--python", worker_python] if worker_python else [])]
    started = time.monotonic()
    with open(trial.directory.with_suffix(".log"), "w") as log:
        trial.returncode = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, cwd=root,
                                          env={**os.environ, "PYTHONPATH": str(root)}).returncode
    trial.wall_seconds = time.monotonic() - started
    return trial


def reduce_trial(trial: Trial, *, python: str, worker_python: str | None, jobs: int, time_limit: float) -> None:
    """Reduce the trial's frontend findings (once: a finding reduced before is left alone), but
    not those the campaign filed as hits of known bugs: they count as known whatever their
    reduced form (a root cause is new only when none of its findings is known), so reducing
    them could change no count of new root causes."""
    store = FindingStore(trial.directory)
    todo = [trial.directory / f.directory for f in store.findings.values()
            if f.signature.verdict.is_frontend_bug and not f.reduction and not f.known]
    if not todo:
        return
    command = [*mutate(python), "reduce", *map(str, todo), "--time-limit", f"{time_limit:.0f}", "--no-ablation",
               "--matters-budget", "12", "-j", str(jobs), "--json",
               *(["--python", worker_python] if worker_python else [])]
    with open(trial.directory.with_suffix(".reduce.log"), "w") as log:
        subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)


def first_campaign(out: Path, *, flags: list[str], corpus: list[str], seconds: float, python: str,
                   worker_python: str | None, jobs: int, reduce_jobs: int, time_limit: float) -> Path:
    """The returning user's earlier campaign (once: an existing one is reused), reduced."""
    first = Trial("first", 0, out / "first")
    if not first.directory.exists():
        run_trial(first, flags=flags, corpus=corpus, seconds=seconds, python=python, worker_python=worker_python,
                  jobs=jobs)
        print(f"first campaign: {first.directory} ({first.wall_seconds / 60:.0f} min, exit {first.returncode})")
    reduce_trial(first, python=python, worker_python=worker_python, jobs=reduce_jobs, time_limit=time_limit)
    return first.directory


def count_trial(trial: Trial, known: KnownBugs | None) -> None:
    """Distinct root causes of one trial, from its finding directories (after reduction)."""
    store = FindingStore(trial.directory)
    frontend = [f for f in store.findings.values() if f.signature.verdict.is_frontend_bug]
    trial.frontend_signatures = len(frontend)
    try:
        stats = json.loads((trial.directory / "stats.json").read_text())
        trial.arcs = int(stats.get("snapshot", {}).get("arcs", 0))
        trial.execs = int(stats.get("snapshot", {}).get("execs", 0))
    except (OSError, ValueError):
        pass
    by_form: dict[str, dict[str, Any]] = {}
    for finding in sorted(frontend, key=lambda f: f.first_seen):
        reduction = finding.reduction
        if reduction.get("confirmed") and reduction.get("source"):
            key = "form:" + (reduction.get("canonical") or canonical_digest(reduction["source"]))
        else:
            trial.unreduced += 1
            key = "signature:" + finding.signature.describe()  # unreduced: its own signature stands for it
        is_known = bool(finding.known) or (known is not None and known.match(
            finding, directory=trial.directory / finding.directory) is not None)
        provenance = str(finding.history[0].get("provenance", "")) if finding.history else ""
        from_seed = provenance.startswith("seed:")
        families = sorted({step.split(".", 1)[0] for step in provenance.split("+") if "." in step}) \
            if not from_seed else []
        cause = by_form.setdefault(key, dict(key=key, at=finding.first_seen, kind=finding.signature.kind,
                                             needed=_merge_needs(finding),
                                             signatures=[], known=is_known, seed=from_seed, families=families,
                                             configuration=reduction.get("configuration", finding.configuration),
                                             found_under=finding.configuration,
                                             directory=str(trial.directory / finding.directory)))
        cause["signatures"].append(finding.signature.describe())
        cause["known"] = cause["known"] and is_known
        cause["seed"] = cause["seed"] or from_seed
    trial.causes = _merge_by_what_matters(list(by_form.values()))


def _merge_needs(finding: Finding) -> Any:
    """What a finding's reduced form is merged by: the constructs its what-matters analysis
    needed; for a crash that needs a configuration alone (every crash showing only under it
    needs that much), with how it crashes too (`failure_key`: the exception and its message).
    Wrong results that need a configuration alone stay one cause whatever they diverge in
    (graph deduplication's regions that ignore a constant give a wrong value, a wrong shape, a
    wrong global): where a wrong result shows tells no two bugs apart."""
    needed = needed_constructs(finding.reduction) if finding.reduction else None
    if only_configurations(needed) and finding.signature.verdict is not Verdict.MISMATCH:
        return failure_key(finding)
    return needed


def _merge_by_what_matters(causes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Reduced forms of one signature kind whose what-matters analyses needed the same
    constructs are one root cause (the earliest stands); a configuration alone is not
    enough (`_merge_needs`)."""
    merged: dict[tuple[str, frozenset[str]], dict[str, Any]] = {}
    out: list[dict[str, Any]] = []
    for cause in sorted(causes, key=lambda c: c["at"]):
        if cause["needed"]:
            group = merged.get((cause["kind"], cause["needed"]))
            if group is not None:
                group["signatures"] += cause["signatures"]
                group["known"] = group["known"] and cause["known"]
                group["seed"] = group["seed"] or cause["seed"]
                continue
            merged[(cause["kind"], cause["needed"])] = cause
        out.append(cause)
    return out


def side_by_side(trials: list[Trial], names: list[str], hours: float) -> list[str]:
    """Each configuration's checks and distinct root causes per CPU-hour, then each one's
    ratios of both to the first configuration's (issue 32: checks faster, the yield not lower)."""
    rates = {name: ([t.execs / hours for t in trials if t.config == name],
                    [len(t.causes) / hours for t in trials if t.config == name]) for name in names}
    lines = [f"  {name}: checks per CPU-hour {summary(checks)}; distinct root causes per CPU-hour {summary(causes)}"
             for name, (checks, causes) in rates.items()]

    def ratio(name: str, which: int) -> float:
        mine, first = rates[name][which], rates[names[0]][which]
        return statistics.fmean(mine) / max(statistics.fmean(first), 1e-9) if mine and first else 0.0

    lines += [f"{name}/{names[0]}: checks per CPU-hour = {ratio(name, 0):.2f}  (goal >= 2), "
              f"distinct root causes per CPU-hour = {ratio(name, 1):.2f}  (goal >= 1)" for name in names[1:]]
    return lines


def summary(values: list[float]) -> str:
    if not values:
        return "-"
    mean = statistics.fmean(values)
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean:6.1f} ± {spread:4.1f} [{min(values):g}-{max(values):g}]"


def plot(trials: list[Trial], path: Path, cpu_minutes: float, *, jobs: int = 1, new_only: bool = False) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 5))
    colours: dict[str, Any] = {}
    for trial in trials:
        times = sorted(cause["at"] / 60 * jobs for cause in trial.causes  # campaign seconds -> CPU-minutes
                       if not (new_only and cause["known"]))
        xs, ys = [0.0], [0]
        for n, minute in enumerate(times, start=1):
            xs += [minute, minute]
            ys += [n - 1, n]
        xs.append(cpu_minutes)
        ys.append(len(times))
        first_of_config = trial.config not in colours
        colour = colours.setdefault(trial.config, f"C{len(colours)}")
        axes.plot(xs, ys, color=colour, alpha=0.8, label=trial.config if first_of_config else None)
    axes.set_xlabel("CPU-minutes (wall-clock minutes x workers)")
    axes.set_ylabel("new distinct reduced root causes" if new_only else "distinct reduced root causes")
    axes.set_title("Discovery curve, one line per trial")
    axes.legend()
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", action="append", default=None,
                        help="a configuration by name, or NAME=FLAGS (repeatable; default: guided, unguided)")
    parser.add_argument("--config-root", action="append", default=[], metavar="NAME=PATH",
                        help="the configuration NAME fuzzes with the mutator of another checkout (a git worktree of "
                             "an earlier commit: code compared side by side); reductions and counts use this one's")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=1,
                        help="the seed of the first trial (--first-seed 2 --trials 2: rounds 2 and 3 of an --out "
                             "whose round 1 ran before; --count-only --trials 3 counts all three)")
    parser.add_argument("--cpu-minutes", type=float, default=15.0, help="CPU budget of each trial")
    parser.add_argument("--corpus", action="append", default=None, help="seeds (repeatable; default: seeds/)")
    parser.add_argument("--known", action="append", default=[], type=Path,
                        help="findings filed before (a campaign directory, ...): what is not new")
    parser.add_argument("--out", type=Path, default=None, help="where the trials' campaign directories go")
    parser.add_argument("--jobs", type=int, default=1, help="workers per trial")
    parser.add_argument("--parallel", type=int, default=max(1, (os.cpu_count() or 2)), help="trials at a time")
    parser.add_argument("--reduce-jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--reduce-time-limit", type=float, default=90.0, help="seconds per finding's reduction")
    parser.add_argument("--python", default=None, help="the workers' interpreter (the torch under test)")
    parser.add_argument("--count-only", action="store_true",
                        help="count the trials already in --out (reducing any not reduced yet)")
    parser.add_argument("--returning", action="store_true",
                        help="first an ordinary campaign of the same corpus and budget, then every trial with it as "
                             "--known: count the new root causes")
    parser.add_argument("--first-config", default="today", help="the first campaign's configuration (a name or "
                                                                "NAME=FLAGS)")
    parser.add_argument("--first-python", default=None, help="the first campaign's workers' interpreter (its torch)")
    parser.add_argument("--first-jobs", type=int, default=None, help="the first campaign's workers (default: --jobs; "
                                                                      "its CPU budget is the trials')")
    args = parser.parse_args()
    configs: dict[str, list[str]] = {}
    for spec in args.config or ["guided", "unguided"]:
        name, defined, flags = spec.partition("=")
        configs[name] = shlex.split(flags) if defined else CONFIGS[name]  # NAME= : as shipped, under that name
    roots = {name: Path(path).resolve() for name, _, path in (spec.partition("=") for spec in args.config_root)}
    for name, root in roots.items():
        if name not in configs or not (root / "cli.py").is_file():
            sys.exit(f"--config-root {name}={root}: needs a configuration of that name and a checkout with cli.py")
    out = args.out or Path(f"/tmp/mutator-yield-{int(time.time())}")
    out.mkdir(parents=True, exist_ok=True)
    trials = [Trial(name, seed, out / f"{name}-{seed}")
              for seed in range(args.first_seed, args.first_seed + args.trials) for name in configs]
    python = sys.executable
    corpus = args.corpus or ["seeds"]
    if args.returning:
        name, _, flags = args.first_config.partition("=")
        first_jobs = args.first_jobs or args.jobs
        first = first_campaign(out, flags=shlex.split(flags) if flags else CONFIGS[name], corpus=corpus,
                               seconds=args.cpu_minutes * 60 / first_jobs, python=python,
                               worker_python=args.first_python or args.python, jobs=first_jobs,
                               reduce_jobs=args.reduce_jobs, time_limit=args.reduce_time_limit)
        args.known.append(first)
        configs = {name: [*flags, "--known", str(first)] for name, flags in configs.items()}
    if not args.count_only:
        with ThreadPoolExecutor(max_workers=args.parallel) as running:
            for trial in trials:
                if trial.directory.exists():
                    sys.exit(f"{trial.directory}: exists; give another --out, or --count-only to count it")
            list(running.map(lambda t: run_trial(t, flags=configs[t.config], corpus=corpus,
                                                 seconds=args.cpu_minutes * 60 / args.jobs, python=python,
                                                 worker_python=args.python, jobs=args.jobs,
                                                 root=roots.get(t.config, ROOT)), trials))
    for trial in trials:  # counted after reduction: a trial run earlier and never reduced is reduced now
        reduce_trial(trial, python=python, worker_python=args.python, jobs=args.reduce_jobs,
                     time_limit=args.reduce_time_limit)
    known = KnownBugs.load(args.known) if args.known else None
    for trial in trials:
        count_trial(trial, known)
    print(f"{args.trials} trials per configuration, {args.cpu_minutes:g} CPU-minutes each ({args.jobs} workers), "
          f"corpus {', '.join(corpus)}" + (f", new against {', '.join(map(str, args.known))}" if args.known else ""))
    columns = ("root causes", "from mutants", "new causes", "frontend sigs", "arcs", "execs", "unreduced")
    print(f"{'configuration':14} " + " ".join(f"{c:>26}" for c in columns))
    means: dict[str, float] = {}
    mutant_means: dict[str, float] = {}
    for name in configs:
        mine = [t for t in trials if t.config == name]
        values = [[len(t.causes) for t in mine], [t.mutant_causes for t in mine], [t.new_causes for t in mine],
                  [t.frontend_signatures for t in mine], [t.arcs for t in mine], [t.execs for t in mine],
                  [t.unreduced for t in mine]]
        means[name] = statistics.fmean(values[0]) if mine else 0.0
        mutant_means[name] = statistics.fmean(values[1]) if mine else 0.0
        print(f"{name:14} " + " ".join(f"{summary(v):>26}" for v in values))
    for name in configs:
        by_family: dict[str, int] = {}
        mine = [c for t in trials if t.config == name for c in t.causes if not c["seed"]]
        for cause in mine:
            for family in cause["families"]:
                by_family[family] = by_family.get(family, 0) + 1
        print(f"  {name}: root causes from mutants by the families of their first trigger's operators "
              f"({len(mine)} over its trials): " + ", ".join(f"{f} {n}" for f, n in sorted(by_family.items())))
    for trial in trials:
        print(f"  {trial.directory.name}: {len(trial.causes)} root causes ({trial.mutant_causes} from mutants, "
              f"{trial.new_causes} new): " + "; ".join(
                  f"{c['signatures'][0]}{' (seed)' if c['seed'] else ''} at {c['at'] / 60 * args.jobs:.1f} CPU-min"
                  for c in trial.causes))
    if args.known:
        hours = args.cpu_minutes / 60
        new_means = {name: statistics.fmean([t.new_causes for t in trials if t.config == name]) / hours
                     for name in configs}
        for name in configs:
            rates = [t.new_causes / hours for t in trials if t.config == name]
            under: dict[str, int] = {}
            for trial in trials:
                for cause in trial.causes:
                    if trial.config == name and not cause["known"]:
                        under[cause["found_under"]] = under.get(cause["found_under"], 0) + 1
            print(f"  {name}: new root causes per CPU-hour {summary(rates)}; found under "
                  + (", ".join(f"{c} {n}" for c, n in sorted(under.items())) or "-"))
        for trial in trials:
            for cause in trial.causes:
                if not cause["known"]:
                    print(f"    new in {trial.directory.name}: {cause['signatures'][0]} (under {cause['found_under']}, "
                          f"needs {cause['configuration']}) {cause['directory']}")
        if "today" in configs:
            for name in (n for n in configs if n != "today"):
                print(f"new yield {name}/today = {new_means[name] / max(new_means['today'], 1e-9):.2f}"
                      "  (new distinct reduced root causes per CPU-hour; goal for axis >= 3)")
    print("\n".join(side_by_side(trials, list(configs), args.cpu_minutes / 60)))
    picture = out / "discovery.png"
    plot(trials, picture, args.cpu_minutes, jobs=args.jobs, new_only=bool(args.known))
    print(f"discovery curve: {picture}")
    others = [name for name in configs if name != "unguided"]
    for name in sorted(others, key=lambda n: n == "guided") if "unguided" in configs else []:  # guided last
        print(f"  from mutants only: {name}/unguided = "
              f"{mutant_means[name] / max(mutant_means['unguided'], 1e-9):.2f}")
        print(f"yield {name}/unguided = {means[name] / max(means['unguided'], 1e-9):.2f}"
              f"  (distinct reduced root causes, same CPU; goal >= 1.5)")


if __name__ == "__main__":
    main()
