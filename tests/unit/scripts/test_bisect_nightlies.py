"""scripts/bisect-nightlies.sh against a fake installer, offline: a "nightly" is a torch module
that says its day, and the reproducer fails from one day on (or, for a fix, before it)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "bisect-nightlies.sh"

FAKE_INSTALL = r"""#!/usr/bin/env bash
# PYTHON DAY VERSIONS: "installs" the nightly of DAY, or exits 3 for a day without one
set -eu
echo "$2 $3" >> "$FAKE_LOG"
case " ${FAKE_MISSING:-} " in *" $2 "*) exit 3 ;; esac
site="$("$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
mkdir -p "$site/torch"
printf '__version__ = "2.15.0.dev%s"\nclass version:\n    git_version = "g%s"\n' "$2" "$2" > "$site/torch/__init__.py"
"""


def repro(tmp_path: Path, condition: str) -> Path:
    """A reproducer that fails (exit 1) where `condition` on the nightly's day holds."""
    path = tmp_path / "repro.py"
    path.write_text(textwrap.dedent(f"""\
        import sys
        import torch
        day = int(torch.__version__.split("dev")[1])
        sys.exit(1 if {condition} else 0)
    """))
    return path


def bisect(tmp_path: Path, reproducer: Path, good: str, bad: str, *, missing: str = "") -> tuple[int, str, list[str]]:
    installer = tmp_path / "fake-install"
    installer.write_text(FAKE_INSTALL)
    installer.chmod(0o755)
    venv = tmp_path / "venv"
    if not venv.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    log = tmp_path / "installed.log"
    log.write_text("")
    env = dict(os.environ, BISECT_INSTALL=str(installer), FAKE_LOG=str(log), FAKE_MISSING=missing,
               TMPDIR=str(tmp_path))  # the script keeps its scratch directory (the log of the last run) there
    # relative paths, as a user types them: the reproducer runs in a scratch directory all the same
    proc = subprocess.run(["bash", str(SCRIPT), reproducer.name, "--good", good, "--bad", bad,
                           "--nightly-versions", "2.14.0,2.15.0", "--venv", venv.name],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr, log.read_text().split("\n")[:-1]


def test_a_regression_is_found_in_a_logarithmic_number_of_nightlies(tmp_path: Path):
    code, output, installed = bisect(tmp_path, repro(tmp_path, "day >= 20260815"), "20260703", "20260930")
    assert code == 0, output
    assert "good: nightly 20260814 (2.15.0.dev20260814 git g20260814)" in output
    assert "bad:  nightly 20260815 (2.15.0.dev20260815 git g20260815)" in output
    assert "broke it landed after nightly 20260814 and by 20260815" in output
    assert len(installed) <= 2 + 7  # both ends, then at most ceil(log2(89)) days
    assert installed[0] == "20260703 2.14.0,2.15.0"  # the versions reach the installer


def test_a_fix_is_found_when_the_good_day_is_the_later_one(tmp_path: Path):
    code, output, _ = bisect(tmp_path, repro(tmp_path, "day < 20260820"), "20260930", "20260703")
    assert code == 0, output
    assert "good: nightly 20260820" in output and "bad:  nightly 20260819" in output
    assert "the fix landed after nightly 20260819 and by 20260820" in output


def test_days_without_a_nightly_are_skipped_and_named(tmp_path: Path):
    code, output, installed = bisect(tmp_path, repro(tmp_path, "day >= 20260815"), "20260703", "20260930",
                                     missing="20260815 20260816")
    assert code == 0, output
    assert "good: nightly 20260814" in output and "bad:  nightly 20260817" in output
    assert "no nightly to tell between them on:" in output and "20260815" in output and "20260816" in output


@pytest.mark.parametrize("good, bad, wrong", [("20260901", "20260930", "20260901"), ("20260703", "20260801", "20260801")])
def test_ends_that_do_not_hold_stop_the_bisect_with_what_to_do(tmp_path: Path, good: str, bad: str, wrong: str):
    code, output, installed = bisect(tmp_path, repro(tmp_path, "day >= 20260815"), good, bad)
    assert code == 2
    assert f"the nightly of {wrong} is" in output and "widen the range" in output
    assert len(installed) <= 2


def test_bad_arguments_are_one_line_errors(tmp_path: Path):
    proc = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "missing.py"), "--good", "20260703", "--bad", "20260930",
                           "--nightly-versions", "2.15.0"], capture_output=True, text=True)
    assert proc.returncode == 2 and "no such reproducer" in proc.stderr
    reproducer = repro(tmp_path, "True")
    proc = subprocess.run(["bash", str(SCRIPT), str(reproducer), "--good", "2026-07-03", "--bad", "20260930",
                           "--nightly-versions", "2.15.0"], capture_output=True, text=True)
    assert proc.returncode == 2 and "not a day as YYYYMMDD" in proc.stderr
