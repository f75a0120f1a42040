"""The sandbox's decisions that need no child process: which layer, what the audit guard refuses.
(The confinement itself is tested through real workers: tests/integration/test_sandbox.py.)"""

from __future__ import annotations

import os
import socket

import pytest

from mutator.exec import sandbox
from mutator.exec.sandbox import _AuditGuard, _is_compiler, describe, effective


def test_the_layer_a_choice_gets():
    assert effective("off", "landlock ABI 7") == "off"
    assert effective("audit", "landlock ABI 7") == "audit hooks"
    assert effective("on", "landlock ABI 7") == "landlock ABI 7"
    assert effective("on", "audit hooks") == "audit hooks"
    assert effective("on", "") == "audit hooks"  # a worker that did not say: the hooks, never nothing


def test_an_executor_describes_its_workers_layers():
    assert describe("on", ["landlock ABI 7", "landlock ABI 7"]) == "landlock ABI 7"
    assert describe("on", []) == "audit hooks"
    assert describe("off", ["landlock ABI 7"]) == "off"
    assert describe("on", ["landlock ABI 7", "audit hooks", "landlock ABI 7"]) == \
        "landlock ABI 7 on 2, audit hooks on 1"


def test_readable_roots_hold_python_and_the_system_but_not_the_temp_directory():
    roots = sandbox.readable_roots()
    assert os.path.realpath(os.__file__).startswith(tuple(r + "/" for r in roots))
    assert "/usr" in roots and "/tmp" not in roots


@pytest.mark.parametrize("event,args,allowed", [
    ("subprocess.Popen", ("g++", ["g++", "-O3", "x.cpp"], None, None), True),
    ("subprocess.Popen", (None, ["/usr/bin/gcc-12", "-c", "x.c"], None, None), True),
    ("subprocess.Popen", ("/bin/sh", ["/bin/sh", "-c", "g++ x.cpp -o x.so"], None, None), True),
    ("subprocess.Popen", ("/bin/sh", "/bin/sh -c 'rm -rf ~'", None, None), False),
    ("subprocess.Popen", (None, ["rm", "-rf", "/"], None, None), False),
    ("subprocess.Popen", (None, ["curl", "http://example.com"], None, None), False),
    ("os.system", ("c++ --version",), True),
    ("os.system", ("kill -9 1",), False),
    ("os.exec", ("/usr/bin/python3", ["python3"], None), False),
])
def test_only_a_compiler_may_be_started_under_the_hooks(event, args, allowed):
    assert _is_compiler(event, args) is allowed


def test_the_audit_guard_refuses_writes_outside_and_allows_inside(tmp_path):
    mine = tmp_path / "run"
    mine.mkdir()
    guard = _AuditGuard((str(mine), "/dev/null"))
    guard("open", (str(mine / "out.txt"), "w", os.O_WRONLY | os.O_CREAT))
    guard("open", ("/dev/null", "w", os.O_WRONLY))
    guard("open", (str(tmp_path / "theirs.txt"), "r", os.O_RDONLY))  # reading is not the hooks' business
    guard("open", (3, "w", os.O_WRONLY))  # an inherited descriptor
    for event, args in [
        ("open", (str(tmp_path / "theirs.txt"), "w", os.O_WRONLY | os.O_CREAT)),
        ("open", (str(tmp_path / "theirs.txt"), None, os.O_RDWR)),  # os.open: the flags tell
        ("open", (str(mine / ".." / "theirs.txt"), "a", os.O_APPEND)),
        ("open", (str(tmp_path / "run-other" / "x"), "w", os.O_WRONLY)),  # a sibling with the same prefix
        ("os.remove", (str(tmp_path / "theirs.txt"), None)),
        ("os.rename", (str(mine / "a"), str(tmp_path / "b"), None, None)),
        ("shutil.rmtree", (str(tmp_path), None)),
    ]:
        with pytest.raises(PermissionError):
            guard(event, args)
    if os.path.exists(mine):
        link = mine / "escape"
        link.symlink_to(tmp_path)
        with pytest.raises(PermissionError):  # a symlink out of the run's directory
            guard("open", (str(link / "theirs.txt"), "w", os.O_WRONLY))


def test_the_audit_guard_refuses_tcp_and_signals_outside_the_group():
    guard = _AuditGuard(("/nonexistent",))
    tcp, udp = socket.socket(), socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        with pytest.raises(PermissionError):
            guard("socket.connect", (tcp, ("127.0.0.1", 80)))
        with pytest.raises(PermissionError):
            guard("socket.bind", (tcp, ("127.0.0.1", 0)))
        guard("socket.connect", (udp, ("127.0.0.1", 53)))  # not TCP
    finally:
        tcp.close()
        udp.close()
    guard("os.kill", (os.getpid(), 0))  # this process is in its own group
    guard("os.kill", (0, 0))
    with pytest.raises(PermissionError):
        guard("os.kill", (1, 9))  # init is in no group of ours
    with pytest.raises(PermissionError):
        guard("os.killpg", (1, 9))


def test_the_audit_guard_refuses_starting_programs_but_compilers():
    guard = _AuditGuard(("/nonexistent",))
    guard("subprocess.Popen", ("g++", ["g++", "x.cpp"], None, None))
    with pytest.raises(PermissionError, match="no program started"):
        guard("subprocess.Popen", (None, ["python3", "-c", "pass"], None, None))  # not from Inductor's code


def test_the_audit_guard_lets_inductors_own_code_start_a_program():
    guard = _AuditGuard(("/nonexistent",))
    code = compile("guard('subprocess.Popen', (None, ['python3', '-c', 'pass'], None, None))",
                   os.path.join("site-packages", "torch", "_inductor", "cpu_vec_isa.py"), "exec")
    exec(code, {"guard": guard})  # as if from torch/_inductor: allowed


def test_a_worker_s_task_cgroup_is_made_beside_its_own_and_stale_ones_go(tmp_path):
    """cgroup v1: the pids hierarchy's own path; the limit written (beyond the worker's own
    tasks), the worker moved in, a dead worker's empty cgroup removed, a live one's kept, and
    the cgroup removed again once the worker has moved back out."""
    table = tmp_path / "cgroup"
    table.write_text("9:name=systemd:/\n8:pids:/slice\n0::/\n")
    parent = tmp_path / "pids" / "slice"
    (parent / "mutator-worker-999999999").mkdir(parents=True)  # no such process
    (parent / f"mutator-worker-{os.getppid()}").mkdir()
    mine = parent / f"mutator-worker-{os.getpid()}"
    path = sandbox.task_cgroup(77, root=str(tmp_path), table=str(table))
    assert path == str(mine)
    assert int((mine / "pids.max").read_text()) == 77 + len(os.listdir("/proc/self/task"))
    assert (mine / "cgroup.procs").read_text() == str(os.getpid())
    assert sorted(p.name for p in parent.iterdir()) == sorted([f"mutator-worker-{os.getppid()}", mine.name])
    (mine / "cgroup.procs").unlink()  # a real cgroup's files go with it
    (mine / "pids.max").unlink()
    sandbox.remove_task_cgroup(path)
    assert (parent / "cgroup.procs").read_text() == str(os.getpid()) and not mine.exists()


def test_no_task_cgroup_where_pids_is_not_delegated(tmp_path):
    table = tmp_path / "cgroup"
    table.write_text("0::/user.slice\n")
    (tmp_path / "user.slice").mkdir()
    (tmp_path / "user.slice" / "cgroup.subtree_control").write_text("cpu memory\n")
    assert sandbox.task_cgroup(77, root=str(tmp_path), table=str(table)) is None
    (tmp_path / "user.slice" / "cgroup.subtree_control").write_text("cpu memory pids\n")
    assert sandbox.own_pids_cgroup(str(tmp_path), table=str(table)) == str(tmp_path / "user.slice")


# -- the environment a program runs in ---------------------------------------------------------

@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "HF_HOME", "DB_PASSWORD"])
def test_secrets_are_scrubbed(name):
    env = sandbox.scrubbed_environment({name: "x", "PATH": "/bin", "LANG": "C"})
    assert name not in env and env["PATH"] == "/bin" and env["PYTHONHASHSEED"] == "0"


def test_programs_do_not_run_as_on_ci():
    """torch's run_tests() saves XML reports (needing xmlrunner) when CI is set."""
    assert "CI" not in sandbox.scrubbed_environment({"CI": "true", "PATH": "/bin"})
