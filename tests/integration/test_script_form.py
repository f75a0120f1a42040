"""Script-form programs (what people paste into PyTorch issues) run unmodified."""

from __future__ import annotations

import pytest

from mutator.core.verdict import Verdict

from tests.conftest import program

pytestmark = pytest.mark.integration


def test_decorators_with_and_without_arguments_and_compiled_modules(checker):
    result = checker.check(program("""
        import torch

        @torch.compile
        def f(x):
            return x.sin() + 1

        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(3, 3)

            @torch.compile(fullgraph=True)
            def forward(self, x):
                return self.lin(x).relu()

        m = M()
        print(round(f(torch.ones(3)).sum().item(), 4))
        print(f(torch.zeros(2)))
        print(m(torch.ones(2, 3)).shape)
        opt = torch.compile(torch.nn.Linear(3, 1), backend="inductor", mode="max-autotune")
        print(opt(torch.ones(4, 3)).shape, opt.weight.shape)
        if __name__ == "__main__":
            print("main guard runs")
    """, "repro.py"))
    assert result.verdict is Verdict.PASS, result.reason
    labels = [c.label for c in result.compiled.observation.calls]
    assert labels == ["f", "f", "M.forward", "Linear"]
    assert {c.backend for c in result.compiled.observation.compiled} == {"eager"}  # strings become the campaign's
    assert "main guard runs" in result.eager.observation.stdout.head


def test_script_divergence_is_judged(checker):
    result = checker.check(program("""
        import torch

        @torch.compile(backend="inductor")
        def f(x):
            if torch.compiler.is_compiling():
                return x * 2
            return x * 1

        print(f(torch.ones(3)))
    """, "repro.py"))
    assert result.verdict is Verdict.MISMATCH
    assert result.judgement.divergence.observation == "result"


def test_old_optimize_api(checker):
    result = checker.check(program("""
        import torch
        import torch._dynamo

        @torch._dynamo.optimize("inductor", nopython=True)
        def f(x):
            print("inside")
            return x + 1

        print(f(torch.ones(2)))
    """, "old.py"))
    assert result.verdict is Verdict.FULLGRAPH_BREAK, result.reason  # nopython=True is fullgraph=True
    assert result.judgement.exception.gb_type == "Failed to trace builtin operator"


def test_uncaught_exception_in_both_is_invalid(checker):
    result = checker.check(program("""
        import torch

        @torch.compile
        def f(x):
            return x + 1

        f(torch.ones(2))
        raise SystemError("the script itself fails")
    """, "fails.py"))
    assert result.verdict is Verdict.INVALID
