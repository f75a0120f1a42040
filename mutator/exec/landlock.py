"""Landlock, through its three system calls: what a forked child may write, connect to and signal.

A small ctypes binding of our own (the `landlock` package on PyPI covers file access only,
not the network rules of ABI 4 or the scoping of ABI 6). Unprivileged: a process restricts
itself and every process it starts, for good; the restriction cannot be lifted, only
narrowed. The kernel interface is documented in the kernel's userspace-api/landlock.rst.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
from collections.abc import Iterable
from dataclasses import dataclass

# The system call numbers are the same on every architecture (the generic table, 5.13+).
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
BIND_TCP, CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

READ = EXECUTE | READ_FILE | READ_DIR
WRITE = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO
         | MAKE_BLOCK | MAKE_SYM)
_FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE  # what a rule on a file (not a directory) may grant


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # __attribute__((packed)) in the kernel's header
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc: ctypes.CDLL | None = None


def _syscall(number: int, *args: object) -> int:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    result = _libc.syscall(ctypes.c_long(number), *args)
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return int(result)


def abi() -> int:
    """The Landlock ABI this kernel offers; 0 where there is none (not Linux, too old a
    kernel, Landlock not enabled at boot, or a seccomp filter that refuses the call)."""
    if platform.system() != "Linux":
        return 0
    try:
        return _syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except OSError as exc:
        if exc.errno in (errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM):
            return 0
        raise


@dataclass(frozen=True)
class Policy:
    """What a sandboxed process keeps: reads (and executes) beneath `readable`, reads and
    writes beneath `writable`; with ABI 4, no TCP bind or connect at all; with ABI 6, no
    signal to, nor abstract unix socket of, a process outside its own domain (the process
    and what it starts)."""

    readable: tuple[str, ...]
    writable: tuple[str, ...]


def restrict_self(policy: Policy, version: int) -> None:
    """Apply `policy` to this process (one thread: call it right after fork) and all it starts.

    Raises OSError when the kernel refuses; paths that do not exist are skipped.
    """
    fs = READ | WRITE | (REFER if version >= 2 else 0) | (TRUNCATE if version >= 3 else 0)
    net = BIND_TCP | CONNECT_TCP if version >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if version >= 6 else 0
    attr = _RulesetAttr(fs, net, scoped)  # an older kernel takes the longer struct when its tail is zero
    ruleset = _syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
    try:
        _add_paths(ruleset, policy.readable, READ)
        _add_paths(ruleset, policy.writable, READ | fs)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))
        _syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)


def _add_paths(ruleset: int, paths: Iterable[str], access: int) -> None:
    for path in paths:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # not there: nothing to grant
        try:
            granted = access if os.path.isdir(path) else access & _FILE_ONLY
            rule = _PathBeneathAttr(granted, fd)
            _syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                     ctypes.c_uint32(0))
        finally:
            os.close(fd)
