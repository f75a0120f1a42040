"""scripts/setup.sh, offline, in a scratch copy of the repository: which venv it makes, on which
Python, with which torch, and what it leaves alone.

The interpreters are fakes (bash scripts) that say their version, make venvs of themselves and
run any other code on this Python, seeing only their venv's packages. Their pip answers `index
versions` with the real pip over a folder of wheel names (the "package index"), and "installs"
by writing a torch's metadata and logging what it was asked. PATH holds only the tools the
script uses, so no Python of this machine is found by accident.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
TOOLS = ("bash", "dirname", "ls", "sort", "tail", "head", "sed", "grep", "mkdir", "rm", "cp", "cat", "env")

FAKE_PYTHON = r"""#!/usr/bin/env bash
# a fake Python __VERSION__ (see test_setup.py)
HERE="$(cd "$(dirname "$0")/.." && pwd)"
if [ "$1" = "-c" ] && [[ "$2" == *platform.python_version* ]]; then
    echo "__VERSION__"
    exit 0
fi
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    target="${@: -1}"
    mkdir -p "$target/bin" "$target/site"
    cp "$0" "$target/bin/python"
    echo "venv $target" >> "$FAKE_LOG"
    exit 0
fi
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
    shift 2
    echo "pip $*" >> "$FAKE_LOG"
    if [ "$1" = "index" ]; then
        exec env PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1 PIP_FIND_LINKS="$FAKE_INDEX" "__REAL__" -m pip "$@"
    fi
    for arg in "$@"; do
        case "$arg" in
            torch==*)
                rm -rf "$HERE"/site/torch-*.dist-info
                mkdir -p "$HERE/site/torch-${arg#torch==}.dist-info"
                printf 'Metadata-Version: 2.1\nName: torch\nVersion: %s\n' "${arg#torch==}" \
                    > "$HERE/site/torch-${arg#torch==}.dist-info/METADATA" ;;
        esac
    done
    exit 0
fi
PYTHONPATH="$HERE/site" exec "__REAL__" -S "$@"
"""


class Machine:
    """A scratch repository, HOME, PATH and package index, and the fake interpreters on it."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "repo"
        (self.root / "scripts").mkdir(parents=True)
        shutil.copy(ROOT / "scripts" / "setup.sh", self.root / "scripts" / "setup.sh")
        shutil.copy(ROOT / "pyproject.toml", self.root / "pyproject.toml")
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        for tool in TOOLS:
            (self.bin / tool).symlink_to(shutil.which(tool))
        self.index = tmp_path / "index"
        self.index.mkdir()
        self.log = tmp_path / "log"
        self.log.write_text("")
        self.python = self.interpreter(tmp_path / "base" / "bin" / "python3", "3.11.7")

    def interpreter(self, path: Path, version: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(FAKE_PYTHON.replace("__VERSION__", version).replace("__REAL__", sys.executable))
        path.chmod(0o755)
        return path

    def release(self, *versions: str) -> None:
        """The package index serves these torches (and no others)."""
        for old in self.index.iterdir():
            old.unlink()
        for version in versions:
            (self.index / f"torch-{version}-py3-none-any.whl").touch()

    def setup(self, **env: str) -> tuple[int, str, str]:
        """Source setup.sh as ./mutate does: its exit status, stderr and the venv it chose."""
        self.log.write_text("")
        environment = {"PATH": str(self.bin), "HOME": str(self.home), "PYTHON": str(self.python),
                       "FAKE_LOG": str(self.log), "FAKE_INDEX": str(self.index), **env}
        proc = subprocess.run(["bash", "-c", 'source "$1/scripts/setup.sh"; echo "$VENV"', "./mutate",
                               str(self.root)], capture_output=True, text=True, env=environment, timeout=120)
        return proc.returncode, proc.stderr, proc.stdout.strip()

    def pip(self) -> list[str]:
        return [line for line in self.log.read_text().splitlines() if line.startswith("pip ")]

    def installs(self) -> list[str]:
        return [line for line in self.pip() if line.startswith("pip install")]


def torch_in(venv: Path) -> list[str]:
    return sorted(p.name.removeprefix("torch-").removesuffix(".dist-info") for p in (venv / "site").glob("torch-*"))


def stamp(venv: Path) -> str:
    return (venv / ".mutator-installed").read_text().strip()


@pytest.fixture()
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)


def test_the_default_venv_gets_the_newest_release_the_index_serves_and_keeps_it(machine: Machine):
    machine.release("2.15.0", "2.16.0", "2.17.0rc1")  # a pre-release is no release
    code, err, venv = machine.setup()
    assert code == 0, err
    assert venv == str(machine.root / ".venv")
    assert err.splitlines()[0].startswith("setting up .venv/: torch 2.16.0 (the newest release the package index "
                                          "serves) on Python 3.11.7")
    assert stamp(Path(venv)) == "torch==2.16.0" and torch_in(Path(venv)) == ["2.16.0"]
    assert machine.installs() == [f"pip install --quiet --disable-pip-version-check torch==2.16.0 -e "
                                  f"{machine.root}[test]"]

    machine.release("2.15.0", "2.16.0", "2.17.0")  # a newer release: the existing venv keeps its torch
    code, err, _ = machine.setup()
    assert code == 0 and err == "" and machine.pip() == []  # not even asked

    (machine.root / "pyproject.toml").touch()
    os.utime(Path(venv) / ".mutator-installed", (0, 0))  # the package changed since: installed again
    code, err, _ = machine.setup()
    assert code == 0, err
    assert "torch 2.16.0 (the venv's, as set up before)" in err and not any(" index " in c for c in machine.pip())
    assert [i.split()[4] for i in machine.installs()] == ["torch==2.16.0"] and stamp(Path(venv)) == "torch==2.16.0"


def test_mutate_torch_pins_a_release_in_a_venv_of_its_own_without_asking_the_index(machine: Machine):
    code, err, venv = machine.setup(MUTATE_TORCH="2.13.0")
    assert code == 0, err
    assert venv == str(machine.root / ".venv-torch2.13.0") and "torch 2.13.0 (MUTATE_TORCH)" in err
    assert [i.split()[4] for i in machine.installs()] == ["torch==2.13.0"]
    assert not any(" index " in call for call in machine.pip()) and stamp(Path(venv)) == "torch==2.13.0"


def test_without_the_index_a_new_venv_is_one_clear_line_naming_the_way_out(machine: Machine):
    code, err, _ = machine.setup()  # the index serves no torch (offline)
    assert code == 2
    [line] = err.splitlines()
    assert line.startswith("error: cannot find torch's newest release for") and "MUTATE_TORCH=2.15.0 ./mutate" in line
    assert "No matching distribution found for torch" in line and machine.installs() == []


def test_a_venv_the_user_names_keeps_its_torch(machine: Machine, tmp_path: Path):
    """The bug this guards against: MUTATOR_VENV with torch 2.13.0 came out with the default, 2.14.1."""
    users = tmp_path / "users-venv"
    subprocess.run([str(machine.python), "-m", "venv", str(users)], check=True, env={"FAKE_LOG": str(machine.log)})
    subprocess.run([str(users / "bin" / "python"), "-m", "pip", "install", "torch==2.13.0+cpu"], check=True,
                   env={"FAKE_LOG": str(machine.log)})
    machine.release("2.16.0")
    code, err, venv = machine.setup(MUTATOR_VENV=str(users))
    assert code == 0, err
    assert venv == str(users) and torch_in(users) == ["2.13.0+cpu"]
    [line] = err.splitlines()
    assert "keeps its torch 2.13.0+cpu" in line
    assert machine.installs() == [f"pip install --quiet --disable-pip-version-check torch==2.13.0+cpu -e "
                                  f"{machine.root}[test]"]  # only mutator, pinned to the torch there
    assert not any(" index " in call for call in machine.pip())

    code, err, _ = machine.setup(MUTATOR_VENV=str(users), MUTATE_TORCH="2.16.0")
    assert code == 0 and machine.pip() == []  # set up already: nothing asked, nothing changed
    (machine.root / "pyproject.toml").touch()
    os.utime(users / ".mutator-installed", (0, 0))
    code, err, _ = machine.setup(MUTATOR_VENV=str(users), MUTATE_TORCH="2.16.0")
    assert code == 2 and "has torch 2.13.0+cpu, MUTATE_TORCH asks for 2.16.0" in err and machine.installs() == []
    assert torch_in(users) == ["2.13.0+cpu"]


def test_a_venv_the_user_names_without_torch_gets_the_default(machine: Machine, tmp_path: Path):
    machine.release("2.15.0", "2.16.0")
    code, err, venv = machine.setup(MUTATOR_VENV=str(tmp_path / "new-venv"))
    assert code == 0, err
    assert torch_in(Path(venv)) == ["2.16.0"]
    assert err.splitlines()[0].startswith(f"setting up {venv} (it has no torch): installs torch 2.16.0 (the newest "
                                          "release the package index serves) on Python 3.11.7")


def test_a_torch_without_metadata_in_the_user_s_venv_is_not_installed_over(machine: Machine, tmp_path: Path):
    users = tmp_path / "source-build"
    subprocess.run([str(machine.python), "-m", "venv", str(users)], check=True, env={"FAKE_LOG": str(machine.log)})
    (users / "site" / "torch").mkdir()
    (users / "site" / "torch" / "__init__.py").write_text("")
    code, err, _ = machine.setup(MUTATOR_VENV=str(users))
    assert code == 2 and "imports a torch pip has no record of" in err and machine.installs() == []


def test_mutate_python_takes_pyenv_s_newest_patch_release_and_names_the_venv_after_it(machine: Machine):
    versions = machine.home / ".pyenv" / "versions"
    machine.interpreter(versions / "3.13.0" / "bin" / "python3.13", "3.13.0")
    machine.interpreter(versions / "3.13.10" / "bin" / "python3.13", "3.13.10")
    machine.interpreter(versions / "3.12.1" / "bin" / "python3.12", "3.12.1")
    machine.release("2.16.0")
    code, err, venv = machine.setup(MUTATE_PYTHON="3.13")
    assert code == 0, err
    assert venv == str(machine.root / ".venv-py3.13") and "on Python 3.13.10" in err.splitlines()[0]
    assert f"venv {venv}" in machine.log.read_text() and torch_in(Path(venv)) == ["2.16.0"]
    code, err, venv = machine.setup(MUTATE_PYTHON="3.12", MUTATE_TORCH="2.15.0")
    assert code == 0, err
    assert venv == str(machine.root / ".venv-torch2.15.0-py3.12") and "on Python 3.12.1" in err


def test_mutate_python_finds_one_on_path_or_a_path_and_says_how_to_get_one_it_cannot_find(machine: Machine,
                                                                                         tmp_path: Path):
    machine.interpreter(machine.bin / "python3.12", "3.12.1")
    code, err, venv = machine.setup(MUTATE_PYTHON="3.12", MUTATE_TORCH="2.15.0")
    assert code == 0 and venv == str(machine.root / ".venv-torch2.15.0-py3.12"), err

    custom = machine.interpreter(tmp_path / "opt" / "python", "3.13.0")
    code, err, venv = machine.setup(MUTATE_PYTHON=str(custom), MUTATE_TORCH="2.15.0")
    assert code == 0 and venv == str(machine.root / ".venv-torch2.15.0-py3.13"), err

    code, err, _ = machine.setup(MUTATE_PYTHON="3.14")
    assert code == 2
    [line] = err.splitlines()
    assert "no Python 3.14 here" in line and "pyenv install 3.14" in line and "MUTATE_PYTHON=/path/to/python3.14" in line

    old = machine.interpreter(tmp_path / "old" / "python", "3.9.18")
    code, err, _ = machine.setup(MUTATE_PYTHON=str(old))
    assert code == 2 and "is Python 3.9.18; mutator needs 3.10 or newer" in err
    assert not (machine.root / ".venv-py3.9").exists()
