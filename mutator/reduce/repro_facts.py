"""What a reproducer needs to know of a finding's runs besides the program: which calls
repeated an earlier call's state, whether the recompile limit was hit, how long eager took,
the Dynamo configuration the program ran under."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from mutator.core.configurations import CONFIGURATIONS
from mutator.judge import storms
from mutator.judge.check import CheckResult
from mutator.core.observation import CallRecord, Observation
from mutator.runtime.configs import Changes


@dataclass(frozen=True, slots=True)
class ReproFacts:
    # (call, earlier call), numbered from 1: a call that recompiled although its inputs and
    # whole state repeat the earlier call's exactly, and nothing Dynamo documents explains it
    repeats: tuple[tuple[int, int], ...] = ()
    limit_hit: bool = False  # a code object hit the recompile limit (one the program did not lower)
    eager_seconds: float = 0.0
    # the Dynamo configuration the compiled calls began under: the check's configuration
    # (`mutator.core.configurations`), and what the program changed itself
    config: Changes = ()
    internal_error: bool = False  # the crash is Dynamo's InternalTorchDynamoError (a RuntimeError: programs catch it)

    @classmethod
    def of(cls, check: CheckResult) -> ReproFacts:
        compiled = check.compiled.observation
        crash = check.judgement.exception
        return cls(repeats=repeats(compiled), limit_hit=limit_hit(compiled), eager_seconds=check.eager.seconds,
                   config=config_of(compiled, check.configuration),
                   internal_error=crash is not None and crash.short_type == "InternalTorchDynamoError")


def repeats(observation: Observation) -> tuple[tuple[int, int], ...]:
    """Calls that recompiled on a state that repeats an earlier call's (per reset epoch), every
    recompilation of them one that documented specialisation does not explain (as in
    `storms.recompile_storm`, whose rule this shares)."""
    seen: dict[int, dict[str, CallRecord]] = defaultdict(dict)
    found: list[tuple[int, int]] = []
    for call in observation.calls:
        epoch = seen[call.resets]
        earlier = epoch.get(call.signature) if call.signature else None
        if earlier is not None and call.recompiles and \
                not any(storms._documented(call, recompile, earlier) for recompile in call.recompiles):
            found.append((call.index + 1, earlier.index + 1))
        if call.signature:
            epoch.setdefault(call.signature, call)
    return tuple(found)


def limit_hit(observation: Observation) -> bool:
    return any(r.limit and not r.lowered for call in observation.calls for r in call.recompiles)


def config_of(observation: Observation, configuration: str = "default") -> Changes:
    """Every configuration entry any compiled call began under, at its first value: the
    settings of the run's `configuration`, and those the program changed (which win)."""
    merged: dict[str, str] = {}
    program: dict[str, str] = {}
    for call in observation.calls:
        for name, value in call.config:
            program.setdefault(name, value)
    merged.update(CONFIGURATIONS[configuration].settings if configuration in CONFIGURATIONS else ())
    merged.update(program)
    return tuple(sorted(merged.items()))
