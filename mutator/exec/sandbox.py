"""Process hygiene for running untrusted programs: environment, limits, parent death.

Torch-free: the parent uses `scrubbed_environment` to start workers; a worker's forked
child calls the rest before it runs a program.
"""

from __future__ import annotations

import ctypes
import os
import re
import resource
import signal

# Names that look like credentials never reach program code.
_SECRET = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION)", re.IGNORECASE)
_SECRET_PREFIXES = ("OPENAI_", "ANTHROPIC_", "AWS_", "AZURE_", "GOOGLE_", "GH_", "GITHUB_", "HF_", "HUGGING")
_PR_SET_PDEATHSIG = 1


def is_secret(name: str) -> bool:
    return bool(_SECRET.search(name)) or name.upper().startswith(_SECRET_PREFIXES)


def scrubbed_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of the environment without credentials, with a fixed hash seed.

    PYTHONHASHSEED is fixed so that eager and compiled runs on different workers iterate
    sets of strings in the same order. CI is dropped: under it torch's own test harness
    (`run_tests` of torch._dynamo.test_case) writes XML reports through xmlrunner, which a
    user's test file neither needs nor, mostly, has installed: programs run as on a
    developer's machine wherever the fuzzer runs.
    """
    env = {k: v for k, v in (os.environ if environ is None else environ).items() if not is_secret(k)}
    env["PYTHONHASHSEED"] = "0"
    env["OMP_NUM_THREADS"] = "1"
    env.pop("TORCH_LOGS", None)
    env.pop("TORCHDYNAMO_VERBOSE", None)
    env.pop("CI", None)
    return env


def scrub_os_environ() -> None:
    for name in [k for k in os.environ if is_secret(k)]:
        del os.environ[name]


def limit_resources(*, memory_bytes: int, cpu_seconds: int) -> None:
    """Soft limits only, so that the runtime can lift them again to report."""
    _set_soft(resource.RLIMIT_AS, memory_bytes)
    _set_soft(resource.RLIMIT_CPU, cpu_seconds)
    _set_soft(resource.RLIMIT_CORE, 0)


def lift_memory_limit() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


def address_space_bytes() -> int:
    """This process's current virtual size (the RLIMIT_AS baseline)."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[0])
    return pages * os.sysconf("SC_PAGE_SIZE")


def die_with_parent() -> None:
    """Linux: get SIGKILL when the worker that forked us dies (so no orphan keeps running)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the worker's timeout still kills the process group


def _set_soft(which: int, value: int) -> None:
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, hard))
