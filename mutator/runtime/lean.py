"""What a forked run need not pay for again: work the warm worker does once, before its heap
freezes, that every run would otherwise repeat (issue 32).

- `preload_test_modules`: PyTorch's test harness. Every program harvested from a
  `torch._dynamo.test_case.TestCase` imports it, and with it `torch.testing._internal`,
  pytest and setuptools: about 2,300 modules, 130-200 ms of CPU in each of a check's two runs,
  as much as compiling the program. Imported here, a run finds them in `sys.modules`. What the
  import changes for every program is put back (`torch.testing._internal.common_utils` turns
  off setting `torch.backends` flags outside their `flags()` context; setuptools appends its
  vendored packages to `sys.path`), so a program that does not import them runs as before.
- `skip_guard_latency_profile`: after building each frame's guards Dynamo times them once
  (`profile_guard_manager`, behind a flush of the CPU's caches) for a latency metric that
  only its logs and compilation metrics show: 15-50 ms of every compiled frame in a forked
  run, a fifth of a compile. The guards are still built and checked against the frame as
  before; only the timing goes.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from typing import Any

TEST_MODULES = (
    "torch._dynamo.test_case",
    "torch._dynamo.testing",
    "torch.testing._internal.common_utils",
    "torch.testing._internal.common_device_type",
)


def preload_test_modules(names: tuple[str, ...] = TEST_MODULES) -> tuple[str, ...]:
    """Import `names` (those this torch has), undoing the process-wide changes importing them
    makes; the names imported."""
    import torch.backends

    state = _process_state(torch.backends)
    imported = []
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a torch without it (or without pytest): its runs import it themselves
            continue
        imported.append(name)
    _restore(torch.backends, state)
    return tuple(imported)


def _process_state(backends: Any) -> dict[str, Any]:
    return {
        "sys.path": list(sys.path),
        "sys.meta_path": list(sys.meta_path),
        "sys.path_hooks": list(sys.path_hooks),
        "warnings.filters": list(warnings.filters),
        "backends.frozen": backends.flags_frozen() if hasattr(backends, "flags_frozen") else None,
    }


def _restore(backends: Any, state: dict[str, Any]) -> None:
    sys.path[:] = state["sys.path"]
    sys.meta_path[:] = state["sys.meta_path"]
    sys.path_hooks[:] = state["sys.path_hooks"]
    warnings.filters[:] = state["warnings.filters"]
    warnings._filters_mutated()  # type: ignore[attr-defined]  # drop the registries' cached answers
    if state["backends.frozen"] is False and backends.flags_frozen():
        # torch.backends has no undo for disable_global_flags(): set the flag it reads, in the
        # module its functions see (not always the object `torch.backends` names)
        backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True


def skip_guard_latency_profile() -> bool:
    """Replace Dynamo's one-off timing of each frame's guards by a zero latency; whether this
    torch had it to replace."""
    try:
        guards = importlib.import_module("torch._dynamo.guards")
    except Exception:  # noqa: BLE001 - a torch without Dynamo's guards module: nothing to skip
        return False
    if not callable(getattr(guards, "profile_guard_manager", None)):
        return False
    guards.profile_guard_manager = _no_latency
    return True


def _no_latency(*_args: Any) -> float:
    return 0.0
