"""What a forked run need not pay for again: work the warm worker does once, before its heap
freezes, that every run would otherwise repeat (issue 32).

- `preload_test_harness`: what PyTorch's test harness imports besides torch. Every program
  harvested from a `torch._dynamo.test_case.TestCase` imports it, and with it pytest,
  setuptools and their kin: about 2,300 modules, 130-200 ms of CPU in each of a check's two
  runs, as much as compiling the program. The worker imports those that are not torch's
  (which a forked child names by importing the harness itself) before the first run of a
  program that `wants_harness` (a worker fuzzing only programs of its own never pays the
  seconds this takes); a run that imports the harness then executes only torch's own part
  of it (about 25 ms). Torch's modules are left for the run to import, as plain python
  would: what they change for every program (`common_utils` forbids setting `torch.backends`
  flags outside their `flags()` context) and which attributes of `torch` they make reachable
  stay the run's doing. What the modules imported here change in the process (setuptools
  appends its vendored packages to `sys.path`) is put back.
- `skip_guard_latency_profile`: after building each frame's guards Dynamo times them once
  (`profile_guard_manager`, behind a flush of the CPU's caches) for a latency metric that
  only its logs and compilation metrics show: 15-50 ms of every compiled frame in a forked
  run, a fifth of a compile. The guards are still built and checked against the frame as
  before; only the timing goes.
- `huge_pages`: a fork copies the page tables of the worker's anonymous memory (400 MB and
  more once torch is warm: 6-8 ms in the worker per run) and the child's exit tears its copy
  down again (9-13 ms of the child's CPU): a quarter of an eager run, and two to four forks
  per check. Backed by transparent huge pages (Linux 6.1+: `MADV_COLLAPSE`, whatever the
  system's THP setting is) that memory has 512 times fewer entries: 2-2.5 ms per fork and
  4-7 ms per child's exit, what the child writes still copied a 4 KB page at a time. The
  memory's contents do not change; it grows by the holes the collapse fills (about 5%).
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import select
import signal
import sys
import time
import warnings
from pathlib import Path
from typing import Any

MADV_COLLAPSE = 25  # linux/mman.h, Linux 6.1+
PR_SET_PDEATHSIG = 1  # linux/prctl.h
COLLAPSE_FIRST = 16  # the run before which a worker first collapses its memory (a short-lived one never does)
COLLAPSE_EVERY = 256  # and again every this many runs: what the worker allocated since (1 ms when nothing)

HARNESS = (
    "torch._dynamo.test_case",
    "torch._dynamo.testing",
    "torch.testing._internal.common_utils",
    "torch.testing._internal.common_device_type",
)


# what a program that imports torch's test harness says (`torch._dynamo.test_case`, `from
# torch._dynamo import test_case`, `torch.testing._internal.common_utils`): a false alarm costs
# one preload, a miss that program's runs the imports (as without the preload)
HARNESS_MARKS = ("test_case", "torch._dynamo.testing", "torch.testing._internal")


def wants_harness(source: str) -> bool:
    """Whether a program may import torch's test harness (a test harvested from PyTorch's)."""
    return any(mark in source for mark in HARNESS_MARKS)


def preload_test_harness(harness: tuple[str, ...] = HARNESS) -> tuple[str, ...]:
    """Import here the modules, other than torch's, that importing `harness` brings in, with
    what importing them changes in the process undone; the modules imported, in order."""
    state = _process_state()
    imported = []
    for name in _brought_in(harness):
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a run that wants it imports it, and fails, itself
            continue
        imported.append(name)
    _restore(state)
    if imported:
        import platform

        platform.processor()  # common_utils asks, and the answer is a subprocess's, then cached
    return tuple(imported)


def _brought_in(harness: tuple[str, ...], timeout: float = 120.0) -> list[str]:
    """The modules not of torch that a forked child of this process imports when it imports
    `harness` (those of it this torch has), in the order it imported them; none from a child
    that takes longer than `timeout` seconds (it is killed: the worker must come up)."""
    read_end, write_end = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.close(read_end)
            _die_with(parent)
            known = set(sys.modules)
            for name in harness:
                try:
                    importlib.import_module(name)
                except BaseException:  # noqa: BLE001
                    pass
            found = [n for n in sys.modules if n not in known and n != "torch" and not n.startswith("torch.")]
            with os.fdopen(write_end, "w") as pipe:
                pipe.write(json.dumps(found))
        finally:
            os._exit(0)
    os.close(write_end)
    chunks, deadline = [], time.monotonic() + timeout
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        while (left := deadline - time.monotonic()) > 0 and select.select([pipe], [], [], left)[0]:
            chunk = pipe.read(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        else:
            os.kill(pid, signal.SIGKILL)
            chunks = []
    os.waitpid(pid, 0)
    text = b"".join(chunks).decode("utf-8", "replace")
    try:
        return list(json.loads(text))
    except ValueError:
        return []


def _die_with(parent: int) -> None:
    """In a forked child: be killed when `parent` (the worker warming up) dies, and exit now if
    it has died already (Linux; elsewhere the child finishes its imports and exits alone). The
    twin of `mutator.exec.sandbox.die_with_parent`, which this layer may not import."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os._exit(0)


def _process_state() -> dict[str, Any]:
    return {
        "sys.path": list(sys.path),
        "sys.meta_path": list(sys.meta_path),
        "sys.path_hooks": list(sys.path_hooks),
        "warnings.filters": list(warnings.filters),
    }


def _restore(state: dict[str, Any]) -> None:
    sys.path[:] = state["sys.path"]
    sys.meta_path[:] = state["sys.meta_path"]
    sys.path_hooks[:] = state["sys.path_hooks"]
    warnings.filters[:] = state["warnings.filters"]
    warnings._filters_mutated()  # type: ignore[attr-defined]  # drop the registries' cached answers


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


def huge_pages() -> int:
    """Collapse this process's anonymous memory into transparent huge pages where the kernel
    can; the bytes of it backed by huge pages afterwards (0 where the kernel cannot: before
    Linux 6.1, THP disabled, not Linux)."""
    try:
        size = int(Path("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size").read_text())
        maps = Path("/proc/self/maps").read_text().splitlines()
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, ValueError, AttributeError):
        return 0
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    for line in maps:
        fields = line.split()
        if len(fields) < 5 or not fields[1].startswith("rw") or fields[1][3] != "p":
            continue
        if len(fields) > 5 and fields[5] != "[heap]":  # a file's pages, the stack, vdso: not ours to move
            continue
        low, high = (int(bound, 16) for bound in fields[0].split("-"))
        start, end = -(-low // size) * size, high // size * size
        if end > start:
            madvise(start, end - start, MADV_COLLAPSE)  # EAGAIN, ENOMEM: some stay small, no harm
    return _anon_huge_bytes()


def _anon_huge_bytes() -> int:
    try:
        with open("/proc/self/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("AnonHugePages:"):
                    return int(line.split()[1]) << 10
    except (OSError, ValueError, IndexError):
        pass
    return 0
