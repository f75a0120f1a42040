"""What a program derives from compiler state is masked by the confirmation's perturbed eager
run, through real workers and real torch: the programs of tests/foreign/compile_behaviour
that copy Dynamo's counters or a CompileCounter's counts into their own data."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutator.core.observation import Mode
from mutator.core.program import load_program
from mutator.core.verdict import Verdict

pytestmark = pytest.mark.integration

FOREIGN = Path(__file__).resolve().parents[1] / "foreign" / "compile_behaviour"


def check(checker, name):
    return checker.check(load_program(FOREIGN / name))


def test_counters_copied_into_a_global_list_and_printed_pass(checker):
    result = check(checker, "copies_counters_into_globals.py")
    assert result.verdict is Verdict.PASS, result.reason
    masked = result.judgement.masked
    assert any("['profiles']" in path for path in masked) and any(path.startswith("stdout line") for path in masked)
    assert not any("['outs']" in path for path in masked)  # the program's own data stays compared
    perturbed = result.runs[2]
    assert perturbed.mode is Mode.EAGER and "mutator: perturbed compiler state" in perturbed.observation.stdout.head


def test_compile_counter_counts_stored_in_a_dict_pass(checker):
    result = check(checker, "compile_counter_into_dict.py")
    assert result.verdict is Verdict.PASS, result.reason
    masked = result.judgement.masked
    assert any("['frames']" in path for path in masked) and any("['ops']" in path for path in masked)
    assert not any("['total']" in path for path in masked)


def test_the_real_divergence_beside_counters_copies_is_reported(checker):
    result = check(checker, "mismatch_beside_counters_copy.py")
    assert result.verdict is Verdict.MISMATCH, result.reason
    assert result.judgement.divergence.where == "call 3 (tag) result[1]", result.reason
    assert any("['frames_seen']" in path for path in result.judgement.masked)


def test_a_check_of_counters_that_holds_only_when_perturbed_raises_no_false_alarm(checker):
    result = check(checker, "copies_totals_then_checks_compiled.py")
    assert result.verdict is Verdict.PASS, result.reason
    assert any("['totals']" in path for path in result.judgement.masked)
    perturbed, stand_in = result.runs[2], result.runs[4]
    assert perturbed.outcome.value == "completed" and stand_in.outcome.value == "raised"  # as the first eager run


def test_a_check_of_counters_that_fails_only_when_perturbed_keeps_the_real_mismatch(checker):
    result = check(checker, "mismatch_with_no_break_check.py")
    assert result.verdict is Verdict.MISMATCH, result.reason
    assert result.judgement.divergence.where == "call 1 (labelled) result[1]"
    assert result.runs[2].outcome.value == "raised" and [r.mode for r in result.runs].count(Mode.EAGER) == 3


def test_counters_copied_after_clearing_them_every_round_pass(checker):
    result = check(checker, "clears_counters_every_round.py")
    assert result.verdict is Verdict.PASS, result.reason
    masked = result.judgement.masked
    assert any("['rounds']" in path for path in masked) and not any("['outs']" in path for path in masked)


def test_the_real_divergence_beside_counters_cleared_every_round_is_reported(checker):
    result = check(checker, "mismatch_beside_counters_reset.py")
    assert result.verdict is Verdict.MISMATCH, result.reason
    assert result.judgement.divergence.where == "call 4 (describe) result[1][0]", result.reason


# Stands for a torch without one of the perturbation's hooks: torch._dynamo.testing loses its
# CompileCounterWithBackend as it is imported (a sitecustomize on the workers' PYTHONPATH).
_WITHOUT_HOOK = """
import importlib.abc, importlib.machinery, sys

class _Drop(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "torch._dynamo.testing":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            del module.CompileCounterWithBackend
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _Drop())
"""


def test_a_hook_the_torch_under_test_lacks_is_said_not_skipped_silently(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "sitecustomize.py").write_text(_WITHOUT_HOOK)
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, str(root / "cli.py"), "run", "--json", "-j", "1",
                           str(FOREIGN / "compile_counter_into_dict.py")], capture_output=True, text=True, cwd=root,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join((str(root), str(tmp_path)))}, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    notes = [line for line in proc.stderr.splitlines() if line.startswith("note: ")]
    assert notes == ["note: this torch has no torch._dynamo.testing.CompileCounterWithBackend (not perturbed)"]
