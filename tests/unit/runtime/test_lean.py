"""runtime.lean: what the test harness imports besides torch imported once, without changing
what a program sees, and Dynamo's guard timing skipped without changing what its guards do.

Each test runs in a fresh interpreter: what they import and patch is process-wide."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

from tests.helpers import alive


def _run(code: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_harness_s_other_modules_are_imported_and_torch_s_left_to_the_run():
    found = _run("""
        import json, sys, warnings
        import torch, torch.backends, torch._dynamo
        from mutator.runtime import lean
        torch.compile(lambda x: x + 1, backend="eager")(torch.ones(2))  # as warm as a worker
        path, filters, meta = list(sys.path), list(warnings.filters), list(sys.meta_path)
        torch_modules = sorted(n for n in sys.modules if n.startswith("torch"))
        imported = lean.preload_test_harness()
        torch.backends.cudnn.benchmark = True  # torch's test modules (which forbid it) are not imported
        seen = {"pytest": "pytest" in sys.modules, "setuptools": "setuptools" in sys.modules,
                "torch_modules": sorted(n for n in sys.modules if n.startswith("torch")) == torch_modules,
                "attribute": hasattr(torch._dynamo, "test_case"), "frozen": torch.backends.flags_frozen(),
                "path": sys.path == path, "filters": warnings.filters == filters, "meta": sys.meta_path == meta,
                "no_torch": all(not n.startswith("torch") for n in imported)}
        import torch._dynamo.test_case  # the run's own import: torch's part runs, and does what it does
        seen["frozen_after_import"] = torch.backends.flags_frozen()
        print(json.dumps(seen))
    """)
    assert found == {"pytest": True, "setuptools": True, "torch_modules": True, "attribute": False, "frozen": False,
                     "path": True, "filters": True, "meta": True, "no_torch": True, "frozen_after_import": True}


def test_a_harness_this_torch_lacks_brings_in_nothing():
    found = _run("""
        import json
        import torch
        from mutator.runtime import lean
        print(json.dumps(lean.preload_test_harness(("torch.no_such_module",))))
    """)
    assert found == []


def test_guards_without_their_latency_profile_still_guard():
    found = _run("""
        import json
        import torch, torch._dynamo
        from torch._dynamo import utils
        from mutator.runtime import lean
        skipped = lean.skip_guard_latency_profile()
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


def test_a_harness_import_that_hangs_is_given_up_on(tmp_path):
    (tmp_path / "hangs_forever.py").write_text("import time\nwhile True:\n    time.sleep(1)\n")
    found = _run(f"""
        import json, sys, time
        sys.path.insert(0, {str(tmp_path)!r})
        from mutator.runtime import lean
        started = time.monotonic()
        brought = lean._brought_in(("hangs_forever",), timeout=2.0)
        print(json.dumps({{"brought": brought, "given_up": time.monotonic() - started < 30}}))
    """)
    assert found == {"brought": [], "given_up": True}


def test_the_child_naming_the_harness_s_modules_dies_with_its_worker(tmp_path):
    """A worker killed while its warm-up waits for that child leaves no child importing on."""
    pid_file = tmp_path / "child.pid"
    (tmp_path / "hangs_forever.py").write_text(
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\nwhile True:\n    time.sleep(1)\n")
    code = f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from mutator.runtime import lean
        lean._brought_in(("hangs_forever",))
    """
    worker = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)])
    try:
        deadline = time.monotonic() + 120
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline and worker.poll() is None, "the child never started importing"
            time.sleep(0.05)
        child = int(pid_file.read_text())
    finally:
        worker.kill()
        worker.wait()
    deadline = time.monotonic() + 30
    while alive(child):
        assert time.monotonic() < deadline, "the child outlived its worker"
        time.sleep(0.05)


def test_huge_pages_back_the_heap_where_the_kernel_can_and_change_nothing_in_it():
    found = _run("""
        import json, os, platform
        from mutator.runtime import lean
        block = bytearray(os.urandom(1 << 20)) * 64  # 64 MB of the heap, written
        digest = hash(bytes(block))
        before = lean._anon_huge_bytes()
        backed = lean.huge_pages()
        pid = os.fork()  # a child of the collapsed process reads and writes its copy
        if pid == 0:
            block[0] ^= 1
            os._exit(0 if hash(bytes(block)) != digest else 3)
        _, status = os.waitpid(pid, 0)
        try:
            mode = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
        except OSError:
            mode = "[never]"
        release = tuple(int(part) for part in platform.release().split("-")[0].split(".")[:2])
        print(json.dumps({"can": release >= (6, 1) and "[never]" not in mode, "grew": backed - before,
                          "same": hash(bytes(block)) == digest, "child": os.waitstatus_to_exitcode(status)}))
    """)
    assert found["same"] and found["child"] == 0
    if found["can"]:
        assert found["grew"] >= 32 << 20
    else:
        assert found["grew"] == 0


def test_programs_that_import_torch_s_test_harness_are_told_apart():
    from mutator.runtime.lean import wants_harness

    assert wants_harness("from torch._dynamo.test_case import TestCase, run_tests\n")
    assert wants_harness("import torch._dynamo.test_case\nimport torch._dynamo.testing\n")
    assert wants_harness("from torch._dynamo import test_case\n")
    assert wants_harness("from torch.testing._internal.common_utils import instantiate_parametrized_tests\n")
    assert not wants_harness("import torch\ntorch.testing.assert_close(torch.ones(2), torch.ones(2))\n")
    assert not wants_harness("import unittest\nclass T(unittest.TestCase):\n    pass\n")
