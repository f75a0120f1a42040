"""runtime.lean: the test harness imported once without changing what other programs see,
and Dynamo's guard timing skipped without changing what its guards do.

Each test runs in a fresh interpreter: what they import and patch is process-wide."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def _run(code: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_preloading_the_test_harness_leaves_backends_flags_and_the_path_as_they_were():
    found = _run("""
        import json, sys, warnings
        import torch, torch.backends
        from mutator.runtime import lean
        path, filters = list(sys.path), list(warnings.filters)
        imported = lean.preload_test_modules()
        torch.backends.cudnn.benchmark = True  # raises once common_utils turned global flags off
        torch.backends.cudnn.benchmark = False
        print(json.dumps({"imported": imported, "loaded": "torch._dynamo.test_case" in sys.modules,
                          "path": sys.path == path, "filters": warnings.filters == filters}))
    """)
    assert found == {"imported": list(lean_modules()), "loaded": True, "path": True, "filters": True}


def test_without_the_restore_importing_the_harness_does_change_them():
    # what the restore is for: if this stops holding, the restore is dead code
    found = _run("""
        import json
        import torch, torch.backends
        import torch._dynamo.test_case
        try:
            torch.backends.cudnn.benchmark = True
            print(json.dumps({"settable": True}))
        except RuntimeError:
            print(json.dumps({"settable": False}))
    """)
    assert found == {"settable": False}


def test_a_module_the_torch_lacks_is_skipped():
    found = _run("""
        import json
        from mutator.runtime import lean
        print(json.dumps(lean.preload_test_modules(("torch._dynamo.test_case", "torch.no_such_module"))))
    """)
    assert found == ["torch._dynamo.test_case"]


def test_guards_without_their_latency_profile_still_guard():
    found = _run("""
        import json
        import torch, torch._dynamo
        from torch._dynamo import utils
        from mutator.runtime import lean
        skipped = lean.skip_guard_latency_profile()
        counts = utils.counters
        def f(x, n):
            return x * n
        compiled = torch.compile(f, backend="eager")
        out = [compiled(torch.ones(2), 2).tolist(), compiled(torch.ones(2), 2).tolist(), compiled(torch.ones(2), 3).tolist()]
        frames = utils.counters["stats"]["unique_graphs"]
        print(json.dumps({"skipped": skipped, "out": out, "graphs": frames,
                          "profile": torch._dynamo.guards.profile_guard_manager.__name__}))
    """)
    # the same input reuses the frame's code; another constant fails its guard and recompiles
    assert found == {"skipped": True, "out": [[2.0, 2.0], [2.0, 2.0], [3.0, 3.0]], "graphs": 2,
                     "profile": "_no_latency"}


def lean_modules() -> tuple[str, ...]:
    from mutator.runtime.lean import TEST_MODULES

    return TEST_MODULES
