"""The campaign directory: the fuzzer's interface to disk, readable with `ls` and `cat`.

    campaign.json     the configuration (so --resume continues the same campaign)
    queue/            kept programs, provenance in the names, a JSON sidecar each
    findings/<sig>/   one directory per bug signature (see mutator.findings.store)
    hangs/<sig>/      the same, for hangs
    lost/             programs whose worker died under them
    invalid/          invalid mutants: index.jsonl (why each failed eagerly), the first ones' programs
    stats.json        counters, rewritten atomically
    dry_run.json      while the dry run lasts: the seeds it has not checked yet (a resumed
                      session checks them first); set_aside.json, the seeds it set aside
    plot_data.csv     a time series for plots
    coverage.bin      the coverage map (feature, hits), for an exact resume

Every write is atomic; a queue entry counts only once its sidecar exists, so a kill
between the two writes loses at most that entry.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import struct
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from mutator.core import storage
from mutator.campaign.configurations import SWEEP_SHARE
from mutator.campaign.corpus import CorpusEntry, CoverageMap
from mutator.core.configurations import DEFAULT
from mutator.findings.finding import SWEEP_PREFIX
from mutator.core.features import CAMPAIGN_COVERAGE
from mutator.core.program import Program, ProgramError, ProgramForm

if TYPE_CHECKING:
    from mutator.mutation.mutator import Recipe

FORMAT_VERSION = 1
PLOT_COLUMNS = ("elapsed", "execs", "execs_per_sec", "corpus", "favoured", "arcs", "features", "findings",
                "hits", "invalid", "unstable")
_PAIR = struct.Struct("<qq")
MAX_INVALID_PROGRAMS = 400
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.+@-]+")


class CampaignError(RuntimeError):
    """The campaign directory cannot be used as asked; the message says what to do."""


@dataclass(frozen=True)
class CampaignConfig:
    corpus: tuple[str, ...]
    backend: str = "eager"
    schedule: str = "rare"
    seed: int = 0
    timeout: float = 60.0
    memory_mb: int = 4096
    coverage: tuple[str, ...] = CAMPAIGN_COVERAGE
    max_stack: int = 3
    splice: bool = True  # family S (splices of two queue entries) among the operators
    feedback: bool = True  # off: nothing is kept for its features (the unguided baseline of bench/yield.py)
    # the Dynamo configurations checks take (`mutator.core.configurations`; the first: the dry run's)
    configurations: tuple[str, ...] = (DEFAULT,)
    avoid_known: bool = True  # queue entries whose mutants keep hitting known bugs get less energy
    sweep_share: float = SWEEP_SHARE  # of the checks, while queue entries wait to be swept under other configurations
    # of the mutants' and sweeps' compiled runs, those that record arcs (coverage.py's tracer); a
    # campaign.json without it is from before --arc-share, when every run recorded them
    arc_share: float = 1.0
    llm: dict[str, Any] | None = None  # the LLM's public settings (model, endpoint, budgets; never the key)
    sandbox: str = ""  # the confinement of the latest session's runs ("landlock ABI 7", "audit hooks", "off")
    tracer: str = ""  # what recorded the latest session's arcs ("sys.monitoring", "coverage.py C tracer")
    # the torch under test (`mutator.core.build.Build` as JSON) and the interpreter --python named, if one:
    # a resumed campaign runs on the same torch (its coverage map is of that torch's lines)
    torch: dict[str, Any] | None = None
    python: str | None = None
    driver: dict[str, Any] | None = None  # the driver's Python, latest session
    created: float = field(default_factory=time.time)
    format: int = FORMAT_VERSION

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any], path: Path) -> CampaignConfig:
        if data.get("format") != FORMAT_VERSION:
            raise CampaignError(f"{path}: campaign format {data.get('format')!r}, this mutator writes "
                                f"{FORMAT_VERSION}; start a new campaign with another --out")
        try:
            return cls(**{**data, "corpus": tuple(data["corpus"]), "coverage": tuple(data["coverage"]),
                          "configurations": tuple(data.get("configurations", (DEFAULT,)))})
        except (KeyError, TypeError) as exc:
            raise CampaignError(f"{path}: not a campaign configuration ({exc})") from None


def chosen_seed(name: str | None, *, clock: Callable[[], int] = time.time_ns) -> int:
    """The RNG seed of a campaign started without one: an instance of a synced campaign takes it
    from its name (stable, so a fleet started again replays itself, and two instances differ),
    any other campaign from the clock. campaign.json keeps it: --resume goes on with it, and
    --seed with it starts the same campaign again."""
    if name is not None:
        return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "big")
    return clock() % 2**32


class Campaign:
    def __init__(self, root: Path, config: CampaignConfig) -> None:
        self.root = root
        self.config = config
        self.queue = root / "queue"
        self._lock: IO[str] | None = None
        self._invalid_kept: int | None = None
        self.problems: list[str] = []  # what could not be read on resume, and what was done about it

    @classmethod
    def create(cls, root: Path, config: CampaignConfig) -> Campaign:
        """A new campaign in `root`, which must be empty (a README.md aside)."""
        if root.exists() and not root.is_dir():
            raise CampaignError(f"{root}: exists and is not a directory")
        if root.exists():
            existing = [p.name for p in root.iterdir() if p.name not in ("README.md", ".gitignore")]
            if existing:
                hint = "continue it with --resume" if (root / "campaign.json").exists() else "empty it"
                shown = sorted(existing, key=lambda name: (name.startswith("."), name))[:4]  # hidden ones last
                raise CampaignError(f"{root}/ is not empty ({', '.join(shown)}); {hint}, "
                                    "or choose another --out")
        for sub in ("queue", "findings", "hangs", "lost"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        campaign = cls(root, config)
        campaign.lock()
        storage.write_json(root / "campaign.json", config.as_json())
        return campaign

    @classmethod
    def resume(cls, root: Path) -> Campaign:
        path = root / "campaign.json"
        if not path.exists():
            raise CampaignError(f"{root}/ holds no campaign (no campaign.json); start one without --resume")
        campaign = cls(root, CampaignConfig.from_json(storage.read_json(path), path))
        campaign.lock()
        storage.remove_stale_temporaries(root)
        return campaign

    def save_config(self, config: CampaignConfig) -> None:
        """A changed configuration (the LLM's settings of a session), written atomically."""
        self.config = config
        storage.write_json(self.root / "campaign.json", config.as_json())

    def lock(self) -> None:
        self._lock = open(self.root / ".lock", "w")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CampaignError(f"{self.root}/ is in use by another mutate fuzz") from None

    def close(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    # -- the queue -----------------------------------------------------------------------
    def entry_name(self, entry: CorpusEntry, *, seed_path: str | None = None) -> str:
        if seed_path is not None:
            origin = _NAME_UNSAFE.sub("_", seed_path.replace(os.sep, "__"))
            return f"id:{entry.id:06d},orig:{origin.removesuffix('.py')}"
        ops = "sweep" if entry.provenance.startswith(SWEEP_PREFIX) else \
            "+".join(dict.fromkeys(step.split("@", 1)[0] for step in entry.provenance.split("+")))
        if len(ops) > 80:
            ops = ops[:77] + "..."
        under = f",config:{entry.configuration}" if entry.configuration != DEFAULT else ""
        return f"id:{entry.id:06d},src:{entry.parent:06d},op:{ops}{under}"

    def program_path(self, name: str) -> Path:
        return self.queue / f"{name}.py"

    def save_entry(self, entry: CorpusEntry, name: str, *, found_at: float, recipe: Recipe | None = None) -> None:
        """The program, then its sidecar (features, provenance and, for a mutant built from a
        recipe, the recipe: `mutate mutate PARENT --recipe` builds it again)."""
        storage.write_text(self.program_path(name), entry.program.source)
        storage.write_json(self.queue / f"{name}.json", dict(
            id=entry.id, parent=entry.parent, depth=entry.depth, provenance=entry.provenance,
            seconds=round(entry.seconds, 4), found_at=round(found_at, 2), form=entry.program.form.value,
            digest=entry.program.digest, recipe=recipe.as_json() if recipe is not None else None,
            configuration=entry.configuration, features=sorted(entry.features),
        ))

    def load_entries(self) -> list[CorpusEntry]:
        """The queue's entries. One that cannot be read (a disk fault, an edit by hand) is
        moved to corrupt/ with its program, and said in `problems`: the rest goes on."""
        entries = []
        for sidecar in sorted(self.queue.glob("id:*.json")):
            program_path = sidecar.with_suffix(".py")
            if not program_path.exists():
                continue
            try:
                data = storage.read_json(sidecar)
                program = Program.from_source(program_path.read_text(encoding="utf-8"), str(program_path))
                entries.append(CorpusEntry(id=data["id"], program=program, features=frozenset(data["features"]),
                                           seconds=data["seconds"], depth=data["depth"], parent=data["parent"],
                                           provenance=data["provenance"],
                                           configuration=data.get("configuration", DEFAULT)))
            except (storage.StorageError, ProgramError, UnicodeDecodeError, KeyError, TypeError, ValueError) as exc:
                moved = self.set_corrupt_aside(sidecar, program_path)
                self.problems.append(f"{program_path.name}: unreadable ({storage.one_line(exc)}); moved to {moved}/, "
                                     "the campaign goes on without it")
        return sorted(entries, key=lambda e: e.id)

    def set_corrupt_aside(self, *paths: Path) -> Path:
        """Move files the campaign cannot read to corrupt/ (kept, never deleted)."""
        target = self.root / "corrupt"
        target.mkdir(exist_ok=True)
        for path in paths:
            if path.exists():
                os.replace(path, target / path.name)
        return target

    # -- what else the campaign keeps ------------------------------------------------------
    def save_lost(self, program: Program, detail: str, *, found_at: float) -> None:
        stem = f"lost-{program.digest}"
        storage.write_text(self.root / "lost" / f"{stem}.py", program.source)
        storage.write_json(self.root / "lost" / f"{stem}.json", dict(detail=detail, found_at=round(found_at, 2)))

    def save_stats(self, stats: dict[str, Any]) -> None:
        storage.write_json(self.root / "stats.json", stats)

    def load_stats(self) -> dict[str, Any]:
        """The last session's statistics; unreadable ones go to corrupt/ and the counters start
        from what the queue and the findings show (the fuzzer's `restore`)."""
        path = self.root / "stats.json"
        if not path.exists():
            return {}
        try:
            stats = storage.read_json(path)
            if not isinstance(stats, dict):
                raise ValueError("not a JSON object")
            return stats
        except (storage.StorageError, ValueError) as exc:
            moved = self.set_corrupt_aside(path)
            self.problems.append(f"stats.json: unreadable ({storage.one_line(exc)}); moved to {moved}/, counters "
                                 "go on from plot_data.csv, the queue and the findings")
            return {"counters": self._last_plotted()}

    def _last_plotted(self) -> dict[str, float]:
        """execs and elapsed of plot_data.csv's last whole row (written after stats.json)."""
        path = self.root / "plot_data.csv"
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return {}
        for line in reversed(lines[1:]):
            values = dict(zip(PLOT_COLUMNS, line.split(",")))
            try:
                return {"execs": int(values["execs"]), "elapsed": float(values["elapsed"])}
            except (KeyError, ValueError):
                continue
        return {}

    def save_coverage(self, coverage: CoverageMap) -> None:
        storage.write_bytes(self.root / "coverage.bin",
                            b"".join(_PAIR.pack(f, n) for f, n in coverage.hits.items()))

    def load_coverage(self) -> CoverageMap:
        path = self.root / "coverage.bin"
        if not path.exists():
            return CoverageMap()
        data = path.read_bytes()
        if len(data) % _PAIR.size:
            moved = self.set_corrupt_aside(path)
            self.problems.append(f"coverage.bin: truncated; moved to {moved}/, coverage is rebuilt from the queue")
            return CoverageMap()
        return CoverageMap(dict(_PAIR.iter_unpack(data)))

    def append_plot(self, row: dict[str, Any]) -> None:
        storage.append_line(self.root / "plot_data.csv", ",".join(str(row.get(c, "")) for c in PLOT_COLUMNS) + "\n",
                            header=",".join(PLOT_COLUMNS) + "\n")

    def save_invalid(self, program: Program, record: dict[str, Any]) -> None:
        """One line per invalid mutant in invalid/index.jsonl (what repair rules are measured
        on); the first MAX_INVALID_PROGRAMS programs themselves beside it."""
        directory = self.root / "invalid"
        if self._invalid_kept is None:
            self._invalid_kept = len(list(directory.glob("*.py"))) if directory.exists() else 0
        if self._invalid_kept < MAX_INVALID_PROGRAMS:
            storage.write_text(directory / f"{program.digest}.py", program.source)
            self._invalid_kept += 1
            record = {**record, "program": f"{program.digest}.py"}
        storage.append_line(directory / "index.jsonl", json.dumps(record, sort_keys=True) + "\n")

    def load_invalid(self) -> list[dict[str, Any]]:
        return storage.read_lines_json(self.root / "invalid" / "index.jsonl")

    def save_set_aside(self, rows: list[dict[str, Any]]) -> None:
        storage.write_json(self.root / "set_aside.json", rows)

    def load_set_aside(self) -> list[dict[str, Any]]:
        path = self.root / "set_aside.json"
        try:
            return list(storage.read_json(path)) if path.exists() else []
        except (storage.StorageError, TypeError) as exc:
            self.problems.append(f"{path.name}: unreadable ({storage.one_line(exc)}); its rows are not kept")
            return []

    def save_dry_run(self, pending: list[Program] | None) -> None:
        """The seeds the dry run has not checked yet (None: the dry run is over)."""
        path = self.root / "dry_run.json"
        if pending is None:
            path.unlink(missing_ok=True)
            return
        storage.write_json(path, [dict(name=p.name, form=p.form.value, source=p.source) for p in pending])

    def load_dry_run(self) -> list[Program]:
        """The seeds a killed session's dry run left unchecked (empty when it ended)."""
        path = self.root / "dry_run.json"
        if not path.exists():
            return []
        try:
            return [Program(row["source"], ProgramForm(row["form"]), row["name"]) for row in storage.read_json(path)]
        except (storage.StorageError, KeyError, TypeError, ValueError) as exc:
            moved = self.set_corrupt_aside(path)
            self.problems.append(f"{path.name}: unreadable ({storage.one_line(exc)}); moved to {moved}/, the seeds "
                                 "it held are not checked again (start them as a corpus of their own)")
            return []

    def describe(self) -> str:
        return json.dumps(self.config.as_json())
