from __future__ import annotations

import os
import textwrap

import pytest

from mutator.core.program import Program

SECRET = "sk-mutator-test-secret-never-visible"
# tests/foreign and tests/fixtures hold programs to judge and files to harvest (some are
# unittest or pytest files), not tests of ours
collect_ignore_glob = ["foreign/*", "fixtures/*"]
# hermetic: an endpoint the developer has configured must not reach the `mutate` runs of the
# tests; the tests that want an LLM start a scripted server and say so themselves
for _name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "MUTATOR_LLM_MODEL"):
    os.environ.pop(_name, None)
# and offline: no test asks the package index (mutator.report.torch_index); those that test it
# give it a fixture of their own
os.environ["MUTATOR_TORCH_INDEX"] = "off"


# Flags a side effect only in the compiled run; drive then misbehaves on the host side
# (`action`: one line).
ONLY_COMPILED = """
import os, signal, sys
import torch
SEEN = []
def fn(x):
    if torch.compiler.is_compiling():
        SEEN.append(1)
    return x + 1
def inputs():
    return (torch.ones(3),)
def drive(f):
    out = f(*inputs())
    if SEEN:
        {action}
    return out
"""


def program(source: str, name: str = "prog.py") -> Program:
    return Program.from_source(textwrap.dedent(source).lstrip(), name)


@pytest.fixture(scope="session")
def pool():
    """One warm pool for the integration tests (workers take seconds to start)."""
    from mutator.core.observation import RunConfig
    from mutator.exec.pool import WorkerPool

    os.environ["OPENAI_API_KEY"] = SECRET  # must never reach a program
    os.environ["MUTATOR_TEST_TOKEN"] = SECRET
    with WorkerPool(workers=2, config=RunConfig(timeout=30)) as pool:
        # the workers' environment is taken: the key goes, or every `mutate` the tests start
        # would find an LLM endpoint (OpenAI's, unreachable here)
        del os.environ["OPENAI_API_KEY"]
        yield pool


@pytest.fixture(scope="session")
def checker(pool):
    from mutator.judge.check import Checker

    return Checker(pool)
