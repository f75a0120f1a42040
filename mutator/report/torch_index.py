"""What the package index says about torch's releases (docs/design.md, "Versions"): the day each
was uploaded and the Pythons it has wheels for, from PyPI's JSON API (`pypi.org/pypi/torch/json`:
every release's files, each with its `upload_time` and `python_version`).

Two things need it: report.md's bisect range (a release's day is the earliest upload time of its
files, `mutator.report.releases`) and `mutate fuzz`'s one line saying that a release newer than
the one under test is out. Neither may fail, or wait long, for want of a network: the index is
asked at most once a day (`MAX_AGE`), with a short timeout, and its answer (or that it could not
be reached) is kept in `$MUTATOR_CACHE` (default `~/.cache/mutator`) as `torch-index.json`;
offline, the last answer stands, or none. `MUTATOR_TORCH_INDEX` names another document of the
same shape (a mirror's, a `file://` fixture), or `off`: never asked (the test suite's setting).
Set-up (`scripts/setup.sh`) finds the newest release with pip instead, which knows the index
the user configured.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mutator.core import storage
from mutator.core.build import Build

INDEX_URL = "https://pypi.org/pypi/torch/json"
TIMEOUT = 3.0  # seconds: a look-up that takes longer is given up for the day
MAX_AGE = 24 * 3600.0  # an answer (or a failure) stands this long
MAX_BYTES = 64 << 20  # torch's document is under 1 MB
_RELEASE = re.compile(r"^\d+\.\d+(?:\.\d+)?$")  # no pre-releases, no post or local versions
_CPYTHON = re.compile(r"^cp(\d)(\d+)$")

Fetch = Callable[[str, float], bytes]


def version_key(version: str) -> tuple[int, ...]:
    """"2.15.0" -> (2, 15, 0); what orders releases."""
    return tuple(int(part) for part in version.split("+")[0].split(".") if part.isdigit())


def python_of(version: str) -> str:
    """"3.11.7" -> "3.11": the Python a wheel is built for."""
    return ".".join(version.split(".")[:2])


@dataclass(frozen=True, slots=True)
class Release:
    """One release of torch as the index lists it."""

    version: str  # "2.15.0"
    uploaded: str  # its earliest file's upload time, UTC: "2026-10-28T15:16:25"
    pythons: tuple[str, ...]  # "3.11", "3.12", ... of its CPython wheels; "any" for a file of every Python

    @property
    def day(self) -> str:
        """YYYYMMDD of `uploaded`."""
        return self.uploaded[:10].replace("-", "")

    def serves(self, python: str) -> bool:
        """Whether it has a file for this Python ("3.11.7" or "3.11")."""
        return "any" in self.pythons or python_of(python) in self.pythons

    def as_json(self) -> dict[str, Any]:
        return dict(version=self.version, uploaded=self.uploaded, pythons=list(self.pythons))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Release:
        return cls(str(data["version"]), str(data["uploaded"]), tuple(data["pythons"]))


@dataclass(frozen=True, slots=True)
class Answer:
    """One look-up of the index: where and when, the releases it listed (oldest first), and
    why it listed none when it could not be read (`error`; then the previous answer's releases)."""

    url: str
    asked: float
    releases: tuple[Release, ...] = ()
    error: str = ""

    def release(self, version: str) -> Release | None:
        """The release of this version ("2.15.0", "2.15.0+cpu"), if listed."""
        wanted = version.split("+")[0]
        return next((r for r in self.releases if r.version == wanted), None)

    def newest(self, python: str) -> Release | None:
        """The newest release with a file for this Python."""
        serving = [r for r in self.releases if r.serves(python)]
        return max(serving, key=lambda r: version_key(r.version)) if serving else None

    def as_json(self) -> dict[str, Any]:
        return dict(url=self.url, asked=self.asked, error=self.error, releases=[r.as_json() for r in self.releases])

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Answer:
        return cls(str(data["url"]), float(data["asked"]), tuple(Release.from_json(r) for r in data["releases"]),
                   str(data.get("error", "")))


def parse(document: bytes) -> tuple[Release, ...]:
    """The releases of a PyPI JSON document of a project, oldest first: final releases with at
    least one file that is not yanked. Raises ValueError for what is no such document."""
    data = json.loads(document)
    if not isinstance(data, dict) or not isinstance(data.get("releases"), dict):
        raise ValueError("not a PyPI project document (no releases)")
    found = []
    for version, files in data["releases"].items():
        live = [f for f in files or () if isinstance(f, dict) and not f.get("yanked")]
        times = [str(f.get("upload_time_iso_8601") or f.get("upload_time") or "") for f in live]
        times = [t for t in times if t]
        if not _RELEASE.match(version) or not times:
            continue
        pythons = sorted({_python_tag(str(f.get("python_version", ""))) for f in live} - {""}, key=version_key)
        found.append(Release(version, min(times)[:19], tuple(pythons)))
    return tuple(sorted(found, key=lambda r: version_key(r.version)))


def _python_tag(tag: str) -> str:
    """"cp311" -> "3.11"; "py3" or "py2.py3" -> "any"; a source archive -> ""."""
    cpython = _CPYTHON.match(tag)
    if cpython:
        return f"{cpython.group(1)}.{cpython.group(2)}"
    return "any" if tag.startswith("py3") or ".py3" in tag else ""


def _fetch(url: str, timeout: float) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "mutator (torch release dates)",
                                                   "Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        data = response.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"more than {MAX_BYTES} bytes")
    return data


def cache_path() -> Path:
    return Path(os.environ.get("MUTATOR_CACHE") or Path.home() / ".cache" / "mutator") / "torch-index.json"


class TorchIndex:
    """`answer() -> Answer`: torch's releases as the index lists them, from disk when it was
    asked within `max_age`. Never raises: an index that cannot be reached, a cache that cannot
    be read or written cost the answer, never the command."""

    def __init__(self, cache: Path, *, url: str = INDEX_URL, timeout: float = TIMEOUT, max_age: float = MAX_AGE,
                 fetch: Fetch = _fetch, clock: Callable[[], float] = time.time) -> None:
        self.cache = cache
        self.url = url
        self.timeout = timeout
        self.max_age = max_age
        self._fetch = fetch
        self._clock = clock

    @classmethod
    def from_env(cls) -> TorchIndex | None:
        """The index `MUTATOR_TORCH_INDEX` names (default PyPI's), cached where `MUTATOR_CACHE`
        says; None when it is `off`."""
        url = os.environ.get("MUTATOR_TORCH_INDEX") or INDEX_URL
        return None if url == "off" else cls(cache_path(), url=url)

    def answer(self) -> Answer:
        cached = self._cached()
        now = self._clock()
        if cached is not None and 0 <= now - cached.asked < self.max_age:
            return cached
        fresh = self._ask(now, cached)
        try:
            storage.write_json(self.cache, fresh.as_json())
        except OSError:
            pass  # a cache that cannot be written: asked again next time
        return fresh

    def _cached(self) -> Answer | None:
        try:
            answer = Answer.from_json(json.loads(self.cache.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return answer if answer.url == self.url else None

    def _ask(self, now: float, previous: Answer | None) -> Answer:
        try:
            return Answer(self.url, now, parse(self._fetch(self.url, self.timeout)))
        except (OSError, ValueError, http.client.HTTPException) as exc:  # offline, a timeout, a page of another kind
            kept = previous.releases if previous is not None else ()
            return Answer(self.url, now, kept, f"{type(exc).__name__}: {storage.one_line(exc)}")


def newer_release(answer: Answer, build: Build) -> Release | None:
    """A release the index lists that is newer than the torch under test (when that is a
    release) and has a file for its Python; None otherwise (a nightly or a source build is
    where it is on purpose)."""
    if not _RELEASE.match(build.torch.split("+")[0]):
        return None
    newest = answer.newest(build.python)
    return newest if newest is not None and version_key(newest.version) > version_key(build.torch) else None


def remind(build: Build, index: TorchIndex | None, *, clock: Callable[[], float] = time.time) -> str:
    """`mutate fuzz`'s line when a newer release than the torch under test is out, at most once
    a day (the day it was said is kept beside the index's answer); "" otherwise."""
    if index is None:
        return ""
    newer = newer_release(index.answer(), build)
    if newer is None:
        return ""
    said = index.cache.with_name("torch-newer-said.json")
    now = clock()
    try:
        last = json.loads(said.read_text(encoding="utf-8"))
        if last["version"] == newer.version and 0 <= now - float(last["said"]) < MAX_AGE:
            return ""
    except (OSError, ValueError, KeyError, TypeError):
        pass  # never said, or a file of another kind: say it
    try:
        storage.write_json(said, dict(version=newer.version, said=now))
    except OSError:
        pass
    current = build.torch.split("+")[0]
    return (f"note: torch {newer.version} is out ({newer.uploaded[:10]}), newer than the torch {current} under test: "
            f"MUTATE_TORCH={newer.version} ./mutate fuzz ... fuzzes it in a venv of its own, or remove .venv/ "
            "and ./mutate sets up the newest (either is a new campaign: another --out)")
