from __future__ import annotations

import os
import textwrap

import pytest

from mutator.program import Program

SECRET = "sk-mutator-test-secret-never-visible"
# tests/foreign and tests/fixtures hold programs to judge and files to harvest (some are
# unittest or pytest files), not tests of ours
collect_ignore_glob = ["foreign/*", "fixtures/*"]


def program(source: str, name: str = "prog.py") -> Program:
    return Program.from_source(textwrap.dedent(source).lstrip(), name)


@pytest.fixture(scope="session")
def pool():
    """One warm pool for the integration tests (workers take seconds to start)."""
    from mutator.observation import RunConfig
    from mutator.pool import WorkerPool

    os.environ["OPENAI_API_KEY"] = SECRET  # must never reach a program
    os.environ["MUTATOR_TEST_TOKEN"] = SECRET
    with WorkerPool(workers=2, config=RunConfig(timeout=30)) as pool:
        yield pool


@pytest.fixture(scope="session")
def checker(pool):
    from mutator.check import Checker

    return Checker(pool)
