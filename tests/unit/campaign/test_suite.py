"""Which corpus paths are test folders (harvested on the fly) and which hold programs."""

from __future__ import annotations

from pathlib import Path

from mutator.campaign.suite import is_suite
from mutator.harvest.kept import HEADER

TEST_CLASS = """import unittest

import torch


class ScaleTests(unittest.TestCase):
    def test_scale(self):
        self.assertEqual(torch.compile(lambda x: x * 2, backend="eager")(torch.ones(1)).item(), 2.0)
"""


def test_a_folder_of_test_files_is_a_suite_and_one_of_harvested_programs_is_not(tmp_path: Path):
    tests, harvested = tmp_path / "tests", tmp_path / "harvested"
    tests.mkdir()
    harvested.mkdir()
    (tests / "test_scale.py").write_text(TEST_CLASS)
    # what `mutate harvest` writes keeps the test's class, and runs it itself at the bottom
    (harvested / "test_scale__ScaleTests__test_scale.py").write_text(
        f"{HEADER}test_scale.py::ScaleTests::test_scale\n{TEST_CLASS}\n"
        "ScaleTests('test_scale').test_scale()\n")
    assert is_suite(tests)
    assert not is_suite(harvested)
