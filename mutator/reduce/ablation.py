"""Backend and mode ablation: does a finding need Dynamo's frontend, or a backend, or a mode?

The reduced program is checked (confirmed, as the fuzzer checks) under each backend and
with `fullgraph` and `dynamic` forced each way, under the Dynamo configuration it fails
under, and with `backend="eager"` under each other configuration (`mutator.core.
configurations`). A finding that reproduces with `backend="eager"` is a frontend bug; one
that shows only with `aot_eager` or `inductor` belongs to the backend; the configuration
rows say under which of Dynamo's configurations it shows.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from mutator.core.configurations import CONFIGURATIONS, DEFAULT
from mutator.judge.check import Checker, Runner
from mutator.findings.signature import Signature
from mutator.core.observation import RunConfig
from mutator.core.program import Program

SETTINGS: tuple[tuple[str, dict[str, object]], ...] = (
    ('backend="eager"', dict(backend="eager")),
    ('backend="aot_eager"', dict(backend="aot_eager")),
    ('backend="inductor"', dict(backend="inductor")),
    ("fullgraph=True", dict(backend="eager", fullgraph=True)),
    ("fullgraph=False", dict(backend="eager", fullgraph=False)),
    ("dynamic=True", dict(backend="eager", dynamic=True)),
    ("dynamic=False", dict(backend="eager", dynamic=False)),
)


@dataclass(frozen=True, slots=True)
class AblationRow:
    setting: str
    verdict: str
    same_signature: bool
    reason: str

    def as_json(self) -> dict[str, object]:
        return dict(setting=self.setting, verdict=self.verdict, same_signature=self.same_signature,
                    reason=self.reason[:300])


CONFIGURATION_ROW = "configuration "  # a configuration row's setting: "configuration nested-graph-breaks"


def ablate(runner: Runner, program: Program, signature: Signature, *, base: RunConfig,
           parallel: int = 2) -> list[AblationRow]:
    """One row per setting, in SETTINGS order (under `base`'s configuration), then one per
    other configuration."""
    others = [(f"{CONFIGURATION_ROW}{name}", dict(backend="eager", configuration=name))
              for name in CONFIGURATIONS if name != base.configuration]

    def one(setting: tuple[str, dict[str, object]]) -> AblationRow:
        name, overrides = setting
        config = RunConfig(backend=str(overrides["backend"]), fullgraph=overrides.get("fullgraph"),  # type: ignore[arg-type]
                           dynamic=overrides.get("dynamic"), timeout=base.timeout,  # type: ignore[arg-type]
                           memory_mb=base.memory_mb, stdout_limit=base.stdout_limit,
                           configuration=str(overrides.get("configuration", base.configuration)))
        result = Checker(runner, config=config).check(program)
        return AblationRow(name, result.verdict.name, Signature.of(result) == signature, result.reason)

    with ThreadPoolExecutor(max_workers=max(1, parallel)) as executor:
        return list(executor.map(one, [*SETTINGS, *others]))


def configurations_label(rows: list[AblationRow], configuration: str) -> str:
    """Under which configurations the finding shows, from the configuration rows and the
    reduced program's own (`configuration`): "" when under every one; "only with nested graph
    breaks (...)" when under its own alone; else the list."""
    showing = [configuration] + [row.setting.removeprefix(CONFIGURATION_ROW) for row in rows
                                 if row.setting.startswith(CONFIGURATION_ROW) and row.same_signature]
    asked = 1 + sum(1 for row in rows if row.setting.startswith(CONFIGURATION_ROW))
    if len(showing) == asked or asked == 1:
        return ""
    if showing == [configuration] and configuration != DEFAULT:
        return CONFIGURATIONS[configuration].needs
    return "under the configurations " + ", ".join(showing) + " only"


def label(rows: list[AblationRow]) -> str:
    """"frontend" when backend="eager" reproduces the finding, "backend (aot_eager, ...)"
    when only other backends do, "does not reproduce" otherwise."""
    by_setting = {row.setting: row for row in rows}
    eager = by_setting.get('backend="eager"')
    if eager is not None and eager.same_signature:
        return "frontend"
    backends = [row.setting.split('"')[1] for row in rows if row.setting.startswith("backend=") and row.same_signature]
    return f"backend ({', '.join(backends)})" if backends else "does not reproduce"
