"""What the package index says about torch's releases, against a scripted index (never the
network): the releases a PyPI document lists, one look-up a day with its answer on disk,
offline without failing, and `mutate fuzz`'s line about a newer release, once a day."""

from __future__ import annotations

import json
import urllib.error
from pathlib import Path

import pytest

from mutator.core.build import Build
from mutator.report import releases
from mutator.report.torch_index import INDEX_URL, Answer, Release, TorchIndex, newer_release, parse, remind

DAY = 24 * 3600.0


def wheel(python: str, uploaded: str, *, yanked: bool = False) -> dict:
    return {"filename": f"torch-x-{python}-{python}-manylinux_2_28_x86_64.whl", "python_version": python,
            "packagetype": "bdist_wheel", "upload_time": uploaded, "yanked": yanked}


def document(**releases_: list[dict]) -> bytes:
    """A PyPI JSON document of torch with these releases ("2_15_0" names 2.15.0)."""
    listed = {name.replace("_", "."): files for name, files in releases_.items()}
    return json.dumps({"info": {"name": "torch", "version": max(listed)}, "releases": listed}).encode()


INDEX = document(
    **{"2_14_1": [wheel("cp310", "2026-09-30T17:50:01"), wheel("cp311", "2026-09-30T17:43:48")],
       "2_15_0": [wheel("cp311", "2026-10-28T15:16:30"), wheel("cp313", "2026-10-28T15:16:25")],
       "2_16_0rc1": [wheel("cp311", "2026-11-20T10:00:00")],  # a pre-release: not a release
       "2_16_0": [wheel("cp311", "2026-12-01T09:00:00", yanked=True)],  # yanked: as if never listed
       "2_5_0": []})  # no files


class Scripted:
    """An index that answers with `document`, or raises `error`; counts the look-ups."""

    def __init__(self, document: bytes = INDEX, error: Exception | None = None) -> None:
        self.document, self.error, self.asked = document, error, 0

    def __call__(self, url: str, timeout: float) -> bytes:
        self.asked += 1
        assert timeout <= 5, "a look-up must not hold a command up"
        if self.error is not None:
            raise self.error
        return self.document


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def index(tmp_path: Path, fetch: Scripted, clock: Clock) -> TorchIndex:
    return TorchIndex(tmp_path / "cache" / "torch-index.json", fetch=fetch, clock=clock)


def test_a_release_is_its_final_version_dated_by_its_earliest_file_with_the_pythons_it_has_wheels_for():
    listed = parse(INDEX)
    assert [r.version for r in listed] == ["2.14.1", "2.15.0"]  # no pre-release, nothing yanked, nothing empty
    assert listed[1] == Release("2.15.0", "2026-10-28T15:16:25", ("3.11", "3.13"))
    assert listed[1].day == "20261028" and listed[1].serves("3.13.0") and not listed[1].serves("3.10.13")
    with pytest.raises(ValueError):
        parse(b'{"message": "Not Found"}')


def test_the_index_is_asked_once_a_day_and_its_answer_kept_on_disk(tmp_path: Path):
    fetch, clock = Scripted(), Clock()
    first = index(tmp_path, fetch, clock).answer()
    assert first.release("2.15.0+cu132").day == "20261028" and fetch.asked == 1
    clock.now += DAY - 60
    again = index(tmp_path, fetch, clock).answer()  # another process, the same day: from disk
    assert again == first and fetch.asked == 1
    clock.now += 120
    index(tmp_path, fetch, clock).answer()
    assert fetch.asked == 2


def test_offline_the_last_answer_stands_and_the_failure_is_not_retried_that_day(tmp_path: Path):
    clock = Clock()
    index(tmp_path, Scripted(), clock).answer()
    clock.now += 2 * DAY
    offline = Scripted(error=urllib.error.URLError("no route to host"))
    answer = index(tmp_path, offline, clock).answer()
    assert answer.error.startswith("URLError") and answer.release("2.15.0") is not None
    clock.now += 60
    index(tmp_path, offline, clock).answer()
    assert offline.asked == 1


def test_never_reached_nor_cached_there_is_no_answer_and_no_exception(tmp_path: Path):
    answer = index(tmp_path, Scripted(error=TimeoutError("timed out")), Clock()).answer()
    assert answer.releases == () and answer.release("2.15.0") is None and "timed out" in answer.error
    unwritable = tmp_path / "file"
    unwritable.write_text("")  # the cache's folder is a file: the answer still comes, unkept
    kept = TorchIndex(unwritable / "torch-index.json", fetch=Scripted(), clock=Clock()).answer()
    assert kept.release("2.15.0") is not None


def test_the_answer_of_another_index_is_not_taken_for_this_one(tmp_path: Path):
    clock = Clock()
    index(tmp_path, Scripted(), clock).answer()
    fetch = Scripted()
    mirror = TorchIndex(tmp_path / "cache" / "torch-index.json", url="https://mirror.example/torch/json",
                        fetch=fetch, clock=clock)
    assert mirror.answer().url == "https://mirror.example/torch/json" and fetch.asked == 1


def test_off_asks_nothing(monkeypatch):
    monkeypatch.setenv("MUTATOR_TORCH_INDEX", "off")
    assert TorchIndex.from_env() is None
    monkeypatch.setenv("MUTATOR_TORCH_INDEX", "")
    assert TorchIndex.from_env().url == INDEX_URL


def test_a_newer_release_counts_only_with_a_wheel_for_the_python_under_test():
    answer = Answer(INDEX_URL, 0.0, parse(INDEX))
    assert newer_release(answer, Build(torch="2.14.1+cu130", python="3.11.7")).version == "2.15.0"
    assert newer_release(answer, Build(torch="2.14.1", python="3.10.13")) is None  # 2.15.0 has no cp310 wheel
    assert newer_release(answer, Build(torch="2.15.0+cpu", python="3.11.7")) is None
    assert newer_release(answer, Build(torch="2.15.0.dev20261001+cpu", python="3.11.7")) is None  # a nightly: chosen
    assert newer_release(answer, Build(torch="2.16.0a0+git1234567", python="3.11.7")) is None


def test_mutate_fuzz_says_a_newer_release_is_out_once_a_day_and_how_to_move(tmp_path: Path):
    fetch, clock = Scripted(), Clock()
    build = Build(torch="2.14.1+cu130", python="3.11.7")
    line = remind(build, index(tmp_path, fetch, clock), clock=clock)
    assert "torch 2.15.0 is out (2026-10-28), newer than the torch 2.14.1 under test" in line
    assert "MUTATE_TORCH=2.15.0 ./mutate fuzz" in line and "remove .venv/" in line and "\n" not in line
    clock.now += 3600
    assert remind(build, index(tmp_path, fetch, clock), clock=clock) == ""
    clock.now += DAY
    assert remind(build, index(tmp_path, fetch, clock), clock=clock) == line
    assert fetch.asked == 2  # the second day's look-up, not one per call
    assert remind(Build(torch="2.15.0", python="3.11.7"), index(tmp_path, fetch, clock), clock=clock) == ""
    offline = Scripted(error=OSError("network is unreachable"))
    assert remind(build, index(tmp_path / "elsewhere", offline, clock), clock=clock) == ""
    assert remind(build, None) == ""


def test_a_release_s_date_comes_from_the_index_and_from_the_table_offline():
    answer = Answer("file:///fixture/torch.json", 0.0, (Release("2.14.1", "2026-10-01T08:00:00", ("3.11",)),))
    dated = releases.date_of(Build(torch="2.14.1+cu130"), answer)
    assert dated.day == "20261001" and "uploaded to file:///fixture/torch.json 2026-10-01" in dated.source
    pypi = releases.date_of(Build(torch="2.14.1"), Answer(INDEX_URL, 0.0, answer.releases))
    assert pypi.source.startswith("uploaded to PyPI 2026-10-01")
    offline = Answer(INDEX_URL, 0.0, (), error="URLError: no route to host")
    assert releases.date_of(Build(torch="2.15.0+cu132"), offline).day == "20261028"  # the table has 2.15.0 too
    assert releases.date_of(Build(torch="2.12.0"), offline) is None
