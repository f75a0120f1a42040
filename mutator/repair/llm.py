"""LLM repair: what rules cannot fix, a model may, when an endpoint is configured.

The prompt carries the program, its eager error, what the operators meant to do and the
lines they changed, and asks for the whole program back with that change kept. The
answer's code block is parsed and must be a program of the same form that still holds
what the operators inserted (checked on the syntax tree, not on the model's word);
running it is the fuzz loop's job, as for any mutant.
"""

from __future__ import annotations

from mutator.llm.client import LLM, Failure, extract_code
from mutator.mutation.registry import by_id
from mutator.repair.request import NotRepaired, RepairRequest, RepairResult, repaired

SYSTEM = """\
You repair Python test programs for a fuzzer of torch.compile (TorchDynamo). A program
was changed by mutation operators and now fails when run normally, without
torch.compile. Make the smallest edit that lets it run: keep every construct the
operators inserted (that construct is what the program is meant to test), keep the names
`fn`, `inputs`, `drive`, `state` and `COMPILE_KWARGS` where they exist, keep it
deterministic and CPU-only, add no torch.compile call and no prints. Answer with the
whole corrected program in one ```python block and nothing else."""


def repair_messages(request: RepairRequest) -> list[dict[str, str]]:
    operators = by_id()
    intents = []
    for step in request.mutant.steps:
        op = operators.get(step.op)
        description = op.DESCRIPTION if op is not None else "no description"
        intents.append(f"- {step.op} at {step.site}: {description}")
    lines = request.program.source.splitlines()
    changed = request.changed_lines()
    region = "\n".join(f"{n:4d}: {lines[n - 1]}" for n in changed if 0 < n <= len(lines)) or "(not known)"
    user = (f"The operators applied, in order:\n{chr(10).join(intents)}\n\n"
            f"The lines they changed (keep what they inserted):\n{region}\n\n"
            f"Running it eagerly fails with:\n{request.describe()}\n\n"
            f"The program ({request.program.form.value} form):\n```python\n{request.program.source}```")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


class LLMRepairer:
    """Blocking (seconds): the fuzz loop calls it from a background thread."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    def repair(self, request: RepairRequest) -> RepairResult:
        if request.is_repair:
            return NotRepaired("already repaired once")
        try:
            answer = self.llm.complete(repair_messages(request), purpose="repair")
            if isinstance(answer, Failure):
                return NotRepaired(f"llm: {answer.reason} ({answer.detail[:200]})")
            code = extract_code(answer.text)
            if code is None:
                return NotRepaired("llm: the answer holds no code block")
            return repaired(request, code, "llm")
        except Exception as exc:  # a bug of ours: one repair lost, never the campaign
            return NotRepaired(f"llm: {type(exc).__name__}: {exc}"[:300])
