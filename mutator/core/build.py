"""Which torch and Python ran a side (docs/design.md, "Versions"): the workers' (the torch under
test, whatever interpreter `--python` names) or the driver's (which never imports torch).

A finding is worth filing only if it fails on the torch its readers run, so every record
that says what was found says where: `campaign.json`, `mutate run --json`, report.md.
"""

from __future__ import annotations

import platform
import re
import sys
from dataclasses import asdict, dataclass
from typing import Any

_RELEASE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:(a|b|rc|\.dev)(\d+))?")
_PRE_RANK = {"a": 1, "b": 2, "rc": 3}  # a source build's "2.16.0a0" sorts before "2.16.0", a nightly before both


@dataclass(frozen=True, slots=True)
class Build:
    torch: str = ""  # torch.__version__: "2.14.1+cu130", "2.15.0.dev20261201+cpu", "2.16.0a0+git5c48869"
    git: str = ""  # torch.version.git_version (a source build's and a release's commit)
    cuda: str = ""  # torch.version.cuda; "" for a CPU build
    debug: bool = False
    python: str = ""  # "3.11.7"
    executable: str = ""  # the interpreter

    @classmethod
    def of_torch(cls, torch: Any) -> Build:
        """The build of an imported torch module, in this interpreter (the worker's)."""
        version = getattr(torch, "version", None)
        return cls(torch=str(torch.__version__), git=str(getattr(version, "git_version", "") or ""),
                   cuda=str(getattr(version, "cuda", "") or ""), debug=bool(getattr(version, "debug", False)),
                   python=platform.python_version(), executable=sys.executable)

    @classmethod
    def driver(cls) -> Build:
        """This process: the driver, which runs no torch."""
        return cls(python=platform.python_version(), executable=sys.executable)

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Build:
        data = data or {}
        return cls(**{key: data[key] for key in cls.__dataclass_fields__ if key in data})

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def kind(self) -> str:
        """"CUDA 13.0 build" or "CPU build" (a CUDA build runs on the CPU as well)."""
        return f"CUDA {self.cuda} build" if self.cuda else "CPU build"

    def describe(self) -> str:
        """torch 2.14.1+cu130 (git 5c48869, CUDA 13.0 build) on Python 3.11.7"""
        if not self.torch:
            return f"Python {self.python} ({self.executable})" if self.python else "unknown"
        return f"{self.describe_torch()} on Python {self.python}"

    def describe_torch(self) -> str:
        """torch 2.14.1+cu130 (git 5c48869, CUDA 13.0 build): the torch alone, for a table with a
        column of Pythons."""
        details = ", ".join(part for part in (f"git {self.git[:7]}" if self.git else "", self.kind,
                                              "debug" if self.debug else "") if part)
        return f"torch {self.torch} ({details})" if self.torch else "unknown torch"

    @property
    def python_minor(self) -> str:
        """"3.11" of "3.11.7": the Python a torch's wheels are built for; "" when unknown."""
        return ".".join(self.python.split(".")[:2])

    def python_key(self) -> tuple[int, ...]:
        """What orders builds by their Python: (3, 11, 7)."""
        return tuple(int(part) for part in re.findall(r"\d+", self.python)[:3])

    def release_key(self) -> tuple[int, ...]:
        """What orders builds by age: the release numbers, then nightlies (`.devYYYYMMDD`)
        before pre-releases (`a0` of a source build, `rc`) before the release itself."""
        match = _RELEASE.match(self.torch)
        if match is None:
            return (-1,)
        major, minor, patch, pre, number = match.groups()
        rank = 4 if pre is None else 0 if pre == ".dev" else _PRE_RANK[pre]
        return (int(major), int(minor), int(patch or 0), rank, int(number or 0))
