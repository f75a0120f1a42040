"""Process hygiene for running untrusted programs: environment, limits, parent death, and
confinement (Landlock, or audit hooks where the kernel has none).

Torch-free: the parent uses `scrubbed_environment` to start workers; a worker's forked
child calls the rest before it runs a program.
"""

from __future__ import annotations

import ctypes
import os
import re
import resource
import signal
import socket
import sys
from collections import Counter

# Names that look like credentials never reach program code.
_SECRET = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION)", re.IGNORECASE)
_SECRET_PREFIXES = ("OPENAI_", "ANTHROPIC_", "AWS_", "AZURE_", "GOOGLE_", "GH_", "GITHUB_", "HF_", "HUGGING")
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


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


OPEN_FILES = 1024  # descriptors a run may hold
MORE_PROCESSES = 512  # processes and threads a run may add (for root: through a pids cgroup, task_cgroup)


def limit_resources(*, memory_bytes: int, cpu_seconds: int, file_bytes: int) -> None:
    """Soft limits only, so that the runtime can lift them again to report: address space,
    CPU time, the size of any file written (SIGXFSZ ignored: the write fails with EFBIG, a
    "File too large" error in the program), open files, and processes. RLIMIT_NPROC counts
    the user's tasks system-wide; the task count of the whole system bounds it from above."""
    _set_soft(resource.RLIMIT_AS, memory_bytes)
    _set_soft(resource.RLIMIT_CPU, cpu_seconds)
    _set_soft(resource.RLIMIT_CORE, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    _set_soft(resource.RLIMIT_FSIZE, file_bytes)
    _set_soft(resource.RLIMIT_NOFILE, OPEN_FILES)
    _set_soft(resource.RLIMIT_NPROC, _tasks() + MORE_PROCESSES)


# -- a pids cgroup: the process limit that also binds root ----------------------------------------
_CGROUP_ROOT = "/sys/fs/cgroup"
_CGROUP_PREFIX = "mutator-worker-"


def task_cgroup(limit: int, *, root: str = _CGROUP_ROOT, table: str = "/proc/self/cgroup") -> str | None:
    """Move this worker into a pids cgroup of its own that holds at most `limit` tasks
    (processes and threads) beyond the worker's: the one process limit the kernel applies to
    root too (RLIMIT_NPROC exempts it), so that a fork bomb in a run stays a hang, not a
    machine out of process ids. Each run's child is in it from its fork (joining at each run
    would pay a cgroup migration per run). Made beside this process's own pids cgroup
    (cgroup v1's pids hierarchy, or v2 where the controller is delegated); None where it
    cannot be (not root, no pids controller, read-only). Cgroups of workers that died are
    removed here."""
    parent = own_pids_cgroup(root, table=table)
    if parent is None:
        return None
    for stale in _stale_cgroups(parent):
        try:
            os.rmdir(stale)
        except OSError:
            pass  # not empty yet, or another worker's removal came first
    path = os.path.join(parent, f"{_CGROUP_PREFIX}{os.getpid()}")
    try:
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "pids.max"), "w") as f:
            f.write(str(limit + len(os.listdir("/proc/self/task"))))
        _move_into(path)
    except OSError:
        try:
            os.rmdir(path)
        except OSError:
            pass
        return None
    return path


def remove_task_cgroup(path: str | None) -> None:
    """The worker's cgroup, once its runs are over: the worker moves back beside it first
    (a cgroup with tasks in it cannot go)."""
    if path is not None:
        try:
            _move_into(os.path.dirname(path))
            os.rmdir(path)
        except OSError:
            pass


def _move_into(cgroup: str) -> None:
    with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))


def own_pids_cgroup(root: str = _CGROUP_ROOT, *, table: str = "/proc/self/cgroup") -> str | None:
    """The directory of this process's pids cgroup, where the controller is usable below it."""
    try:
        with open(table) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        _, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if "pids" in controllers.split(","):  # cgroup v1
            return os.path.join(root, "pids", path.lstrip("/"))
    for line in lines:
        if line.startswith("0::"):  # cgroup v2: only where pids is delegated below our own cgroup
            own = os.path.join(root, line[3:].lstrip("/"))
            try:
                with open(os.path.join(own, "cgroup.subtree_control")) as f:
                    return own if "pids" in f.read().split() else None
            except OSError:
                return None
    return None


def _stale_cgroups(parent: str) -> list[str]:
    try:
        names = os.listdir(parent)
    except OSError:
        return []
    stale = []
    for name in names:
        pid = name[len(_CGROUP_PREFIX):]
        if name.startswith(_CGROUP_PREFIX) and pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            stale.append(os.path.join(parent, name))
    return stale


def _tasks() -> int:
    """Threads of the whole system now (the fourth field of /proc/loadavg: running/total)."""
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[1])
    except (OSError, IndexError, ValueError):
        return 1 << 20


def lift_memory_limit() -> None:
    """What the runtime needs to report after the program: memory, and descriptors (a program
    may have used them all)."""
    for which in (resource.RLIMIT_AS, resource.RLIMIT_NOFILE):
        _, hard = resource.getrlimit(which)
        resource.setrlimit(which, (hard, hard))


def address_space_bytes() -> int:
    """This process's current virtual size (the RLIMIT_AS baseline)."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[0])
    return pages * os.sysconf("SC_PAGE_SIZE")


def die_with_parent() -> None:
    """Linux: get SIGKILL when the process that started us dies (so no orphan keeps running):
    a worker's driver, a run's worker. The kernel sends it when the *thread* that started us
    ends, so the thread that starts a worker must outlive it (WorkerPool stops each worker
    from the thread that serves it). Kept across exec; not inherited by a fork."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the worker's timeout still kills the process group


def become_subreaper() -> None:
    """Linux: orphans among this process's descendants become its children (not init's), so
    that what a program leaves running, even in a session of its own, can be found and ended."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def children() -> list[int]:
    """This process's children (of every thread), from /proc."""
    found: list[int] = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as f:
                found += [int(pid) for pid in f.read().split()]
    except OSError:
        pass
    return found


def end_descendants(*, spare: frozenset[int] = frozenset()) -> None:
    """SIGKILL and reap every child but `spare`, again and again: a subreaper inherits the
    children of each one it reaps, until none is left."""
    for _ in range(1000):
        doomed = [pid for pid in children() if pid not in spare]
        if not doomed:
            return
        for pid in doomed:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in doomed:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _set_soft(which: int, value: int) -> None:
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    if which in (resource.RLIMIT_NOFILE, resource.RLIMIT_NPROC) and soft != resource.RLIM_INFINITY:
        value = min(value, soft)  # never more than the worker had
    resource.setrlimit(which, (value, hard))


# -- confinement --------------------------------------------------------------------------------
# Against accidents, not attackers: a buggy or LLM-written program must not write outside its
# run's directory, reach a TCP listener, or signal a process that is not its own. Landlock where
# the kernel has it; audit hooks (which a program could get around on purpose, and which no
# process it starts inherits) where it does not.

_SYSTEM_READABLE = ("/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/sys", "/dev", "/opt")
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
_COMPILERS = ("gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "as")  # what Inductor runs


def available() -> str:
    """The best layer this machine offers: "landlock ABI N", else "audit hooks". One system
    call: a worker says it when it is ready."""
    from mutator.exec import landlock

    version = landlock.abi()
    return f"landlock ABI {version}" if version else "audit hooks"


def effective(choice: str, offered: str) -> str:
    """The layer runs get with `choice` (of `mutator.core.observation.SANDBOX_CHOICES`) where workers offer `offered`."""
    if choice == "off":
        return "off"
    return offered if choice == "on" and offered else "audit hooks"


def describe(choice: str, offered: list[str]) -> str:
    """The confinement of an executor's runs, from what its ready workers offer: one layer, or
    each with how many workers have it (a cluster's machines may differ)."""
    layers = Counter(effective(choice, o) for o in offered) or Counter([effective(choice, "")])
    if len(layers) == 1:
        return next(iter(layers))
    return ", ".join(f"{layer} on {n}" for layer, n in layers.most_common())


def readable_roots() -> tuple[str, ...]:
    """Where a confined run may read (and execute): Python's and the environment's installation,
    everything on sys.path, and the system's directories (libraries, compilers, /proc, /dev)."""
    roots = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             *(p for p in sys.path if p), *_SYSTEM_READABLE]
    return tuple(dict.fromkeys(os.path.realpath(p) for p in roots))


def beside(program_path: str) -> tuple[str, ...]:
    """The directory of a program that is a file: Dynamo reads the file its code came from,
    and a test may read data kept next to it."""
    directory = os.path.dirname(os.path.abspath(program_path))
    return (directory,) if os.path.isfile(program_path) else ()


def confine(layer: str, *, scratch: str, readable: tuple[str, ...]) -> str:
    """Confine this process (a forked child, one thread) to `scratch` for writing, with `layer`
    (what `effective` said); returns the layer it got: a kernel that refuses Landlock at this
    point gets the audit hooks instead, and says so on stderr."""
    if layer == "off":
        return layer
    writable = (scratch, *_DEVICES)
    if layer.startswith("landlock"):
        from mutator.exec import landlock

        try:
            landlock.restrict_self(landlock.Policy(readable=readable, writable=writable),
                                   int(layer.rsplit(" ", 1)[1]))
            return layer
        except OSError as exc:
            os.write(2, f"mutator: landlock refused ({exc}); confining with audit hooks\n".encode())
    sys.addaudithook(_AuditGuard(writable))
    return "audit hooks"


class _AuditGuard:
    """The fallback: refuses, with PermissionError, opening for writing (and removing, renaming,
    creating) outside `writable`, TCP connect and bind, signals outside the process group, and
    starting any program but a compiler, unless Inductor starts it (a started program is not
    bound by these hooks)."""

    _PATH_EVENTS = {"os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.rename": (0, 1),
                    "os.truncate": (0,), "os.chmod": (0,), "os.chown": (0,), "os.link": (0, 1),
                    "os.symlink": (1,), "os.utime": (0,), "shutil.rmtree": (0,), "os.mkfifo": (0,),
                    "os.mknod": (0,)}
    _WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def __init__(self, writable: tuple[str, ...]) -> None:
        self._writable = tuple(os.path.realpath(p) for p in writable)
        self._group = os.getpgid(0)

    def __call__(self, event: str, args: tuple) -> None:  # type: ignore[type-arg]
        if event == "open":
            path, mode, flags = args
            writing = (flags & self._WRITE_FLAGS) if mode is None else any(c in str(mode) for c in "wax+")
            if writing and not isinstance(path, int):
                self._check_path(path, event)
        elif event in self._PATH_EVENTS:
            for i in self._PATH_EVENTS[event]:
                if i < len(args) and not isinstance(args[i], int):
                    self._check_path(args[i], event)
        elif event in ("socket.connect", "socket.bind"):
            sock = args[0]
            if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type & socket.SOCK_STREAM:
                raise PermissionError(f"sandbox: no TCP {event.split('.')[1]} ({args[1]!r})")
        elif event in ("os.kill", "os.killpg"):
            target = args[0]
            if event == "os.killpg" or target < 0:
                target_group = abs(target) or self._group
            elif target == 0:
                target_group = self._group
            else:
                try:
                    target_group = os.getpgid(target)
                except OSError:
                    return  # no such process: the call fails by itself
            if target_group != self._group:
                raise PermissionError(f"sandbox: no signal to a process outside this run ({target})")
        elif event in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "pty.spawn"):
            if not (_is_compiler(event, args) or _started_by_inductor()):
                raise PermissionError(f"sandbox: no program started but a compiler ({event}: {str(args[:2])[:200]})")

    def _check_path(self, path: object, event: str) -> None:
        real = os.path.realpath(os.fsdecode(path))  # type: ignore[arg-type]
        if not any(real == root or real.startswith(root.rstrip("/") + "/") for root in self._writable):
            raise PermissionError(f"sandbox: {event} outside the run's directory: {real}")


def _is_compiler(event: str, args: tuple) -> bool:  # type: ignore[type-arg]
    """A C/C++ compiler run as Inductor runs one: by name, or as the command of a shell."""
    if event == "os.system":
        return _names_compiler(str(args[0]).split())
    if event != "subprocess.Popen":
        return _names_compiler([os.fsdecode(args[0])])
    executable, argv = args[0], args[1]
    words = os.fsdecode(argv).split() if isinstance(argv, (str, bytes)) else [os.fsdecode(a) for a in argv or []]
    runs = os.fsdecode(executable) if executable else (words[0] if words else "")
    if os.path.basename(runs) in ("sh", "bash", "dash") and len(words) >= 3 and words[1] == "-c":
        return _names_compiler(words[2].split())
    return _names_compiler([runs])


def _started_by_inductor() -> bool:
    """Whether Inductor's own code starts the program (its CPU probe runs this Python)."""
    frame = sys._getframe(2)
    while frame is not None:
        if f"{os.sep}torch{os.sep}_inductor{os.sep}" in frame.f_code.co_filename:
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def _names_compiler(words: list[str]) -> bool:
    name = os.path.basename(words[0]) if words else ""
    return any(name == c or name.startswith(c + "-") for c in _COMPILERS)
