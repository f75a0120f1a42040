"""Check results as JSON (`check_to_json`, what `mutate run --json` prints).

Field names in `check_to_json` are a stable interface (docs/design.md, "Names and
machine-readable output"): add fields, never rename them.
"""

from __future__ import annotations

from typing import Any

from mutator.judge.check import CheckResult
from mutator.core.observation import ExecResult
from mutator.core.values import ExceptionInfo

def check_to_json(result: CheckResult) -> dict[str, Any]:
    judgement = result.judgement
    compiled = result.compiled.observation.compile
    return {
        "path": result.program.name,
        "form": result.program.form.value,
        "verdict": result.verdict.name,
        "reason": result.reason,
        "seconds": round(result.seconds, 3),
        "exception": _exception_json(judgement.exception),
        "eager_exception": _exception_json(judgement.eager_exception),
        "divergence": None if judgement.divergence is None else {
            "observation": judgement.divergence.observation,
            "where": judgement.divergence.where,
            "aspect": judgement.divergence.aspect,
            "detail": judgement.divergence.detail,
        },
        "graph_breaks": list(compiled.graph_breaks) if compiled else [],
        "recompile_reasons": list(compiled.recompile_reasons) if compiled else [],
        "configuration": result.configuration,  # the Dynamo configuration of the compiled runs
        "masked": list(judgement.masked),  # paths not compared: values that differ between two eager runs
        "tests": [{"test": t.test, "eager": t.status, "compiled": c.status}
                  for t, c in zip(result.eager.observation.tests, result.compiled.observation.tests)],
        "runs": [_run_json(run) for run in result.runs],
    }


def _run_json(run: ExecResult) -> dict[str, Any]:
    return {
        "mode": run.mode.value,
        "outcome": run.outcome.value,
        "seconds": run.seconds,
        "detail": run.detail,
        "calls": len(run.observation.calls),
    }


def _exception_json(exc: ExceptionInfo | None) -> dict[str, Any] | None:
    if exc is None:
        return None
    return {
        "type": exc.type_name,
        "message": exc.message[:500],
        "gb_type": exc.gb_type,
        "dynamo_frame": str(exc.dynamo_frame) if exc.dynamo_frame else None,
        "check": exc.check,  # "check" / "compiler": a failing check of the program's own
    }
