"""The prompts of `mutate generate`: what a program is, and which one to write.

All prompt text lives here, so that what the model is told can be read (and changed) in
one place. The system message defines a program exactly as the runtime accepts it
(seeds/README.md, "Harness form"); the user message gives one taxonomy class and a
variation picked by `index`. The LLM client caches answers by the hash of the messages,
so n requests for one class must be n different questions: `index` changes both the
harness shape asked for and which part of the class's trigger shapes to draw from.
"""

from __future__ import annotations

from collections.abc import Sequence

from mutator.llm.taxonomy import TaxonomyClass

SIBLING_CHARS = 4_000  # a reduced program is small; a longer one is cut so that three fit in a prompt

_EXAMPLE = '''\
"""E3: a closure whose captured counter the compiled function updates with nonlocal."""
import torch


def make_step():
    count = 0

    def step(x):
        nonlocal count
        count += 1
        return x * count

    return step


fn = make_step()


def inputs():
    return (torch.arange(4.0),)


def drive(f):
    return [f(*inputs()) for _ in range(3)]
'''

SYSTEM = f"""\
You write test programs for a fuzzer of TorchDynamo, the Python frontend of torch.compile.
The fuzzer runs each program twice, in fresh processes: once eagerly and once with `fn`
compiled by torch.compile(backend="eager"). It compares every call's result, the arguments
after each call (in-place updates), the module's globals, what `drive` returns, what
`state()` returns, and stdout. A difference, or an exception only the compiled run raises,
is a Dynamo bug.

A program is one Python module in harness form. It defines:
- `fn`: a function, or an `nn.Module` instance; this is what gets compiled.
- `inputs()`: returns a fresh tuple of positional arguments for `fn`.
- optionally `drive(f)`: receives the compiled callable and calls it as often as it likes,
  changing state between calls (globals, attributes, grad mode, shapes); what it returns is
  compared. Without `drive` the fuzzer calls `f(*inputs())` once.
- optionally `state()`: returns a value describing side effects, compared after the run.
- optionally `COMPILE_KWARGS`: a dict of torch.compile keyword arguments, such as
  {{"fullgraph": True}} or {{"dynamic": True}}.

Rules:
- Do not call torch.compile, torch._dynamo.optimize or torch.jit: the fuzzer compiles `fn`.
- It must run without error eagerly: plain Python and PyTorch semantics, no expected failure.
- Deterministic: the same observations on every run. Randomness only from torch, random or
  numpy generators (the fuzzer seeds them before each run); no clocks, no `id()` values,
  addresses or default object reprs in anything returned, stored or printed.
- Small and fast: tensors of a few elements, well under a second eagerly, CPU only.
- torch, numpy and the Python standard library only; no files, network, subprocesses,
  threads or input().
- Begin with a one-line docstring naming the taxonomy class and what the program exercises.
- Write new code: not a PyTorch test, not the reproducer of a known issue.

A complete program (its construct only illustrates the form):
```python
{_EXAMPLE}```

Answer with exactly one program in one ```python block and no other code blocks."""

# What the harness around the construct looks like: varied by `index`, independent of the class.
HARNESS_SHAPES = (
    "a plain function `fn`, called once with `inputs()`",
    "an `nn.Module` instance as `fn`, with the construct in `forward` or in a method it calls",
    "a `drive(f)` that calls `f` three times and changes, between the calls, the state the construct depends on",
    "the construct spanning a graph break (`torch._dynamo.graph_break()` in the middle of it)",
    "the construct inside a loop, or inside a helper function that `fn` calls",
    'COMPILE_KWARGS = {"fullgraph": True}, with the whole construct inside the compiled region',
    "a `state()` hook that returns the side effects the construct leaves on objects or globals",
    "a `drive(f)` that calls `f` with inputs of two different shapes",
)
# Which part of the class's list of trigger shapes to draw from; 3 and 8 are coprime, so
# the first 24 requests are 24 different combinations.
PARTS = ("the first third", "the middle third", "the last third")


def generate_messages(cls: TaxonomyClass, *, siblings_of: Sequence[str] = (), avoid: Sequence[str] = (),
                      index: int) -> list[dict[str, str]]:
    """The chat messages asking for program number `index` (from 0) of class `cls`.

    `siblings_of`: reduced programs of known findings; the request is then for a sibling
    of their construct rather than the construct itself. `avoid`: one-line descriptions
    of programs we already have, to steer away from.
    """
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": _request(cls, siblings_of, avoid, index)}]


def _request(cls: TaxonomyClass, siblings_of: Sequence[str], avoid: Sequence[str], index: int) -> str:
    parts = [
        f"Taxonomy class {cls.code}: {cls.title} (category: {cls.category}).",
        f"Definition and trigger shapes: {cls.text}",
        "Write a program whose compiled region (`fn`, and what `drive` does around its calls) puts these "
        "trigger shapes where Dynamo has to model them: valid and deterministic eagerly, using the "
        "construct in a way that Dynamo might get wrong. It need not fail under torch.compile.",
        _variation(index, siblings=bool(siblings_of)),
    ]
    if avoid:
        listed = "\n".join(f"- {line}" for line in avoid)
        parts.append("Programs we already have do the following; pick a trigger shape different from the ones "
                     f"listed here:\n{listed}")
    if siblings_of:
        parts.append(_siblings(siblings_of))
    parts.append("Answer with the program in one ```python block.")
    return "\n\n".join(parts)


def _variation(index: int, *, siblings: bool) -> str:
    """What makes request `index` a question of its own. With siblings to write, the
    findings choose the trigger shape, so only the harness shape varies."""
    where = "" if siblings else f"pick a trigger shape from {PARTS[index % len(PARTS)]} of the list above, and "
    return (f"This is request {index + 1} of a series for this class, and each request asks for a different "
            f"program. For this one, {where}use this harness shape: {HARNESS_SHAPES[index % len(HARNESS_SHAPES)]}.")


def _siblings(sources: Sequence[str]) -> str:
    shown = "\n\n".join(f"```python\n{_cut(source)}```" for source in sources)
    return ("These reduced programs made torch.compile misbehave (known findings):\n\n"
            f"{shown}\n\n"
            "Do not write their construct again. Write a SIBLING of it: the same kind of construct one step "
            "over, used the same way, where a fix for the known finding may not reach. For example the next "
            "dunder (`__add__` -> `__mul__`, `__radd__`, `__iadd__`), the next container type (`dict` -> "
            "`OrderedDict`, `defaultdict`, a `dict` subclass), the next context manager (`no_grad` -> "
            "`enable_grad`, `set_grad_enabled`, a user `__enter__`/`__exit__`), the next exception type or "
            "clause, the next descriptor or iterator.")


def _cut(source: str) -> str:
    text = source if len(source) <= SIBLING_CHARS else source[:SIBLING_CHARS] + "\n# ... (cut)\n"
    return text if text.endswith("\n") else text + "\n"


# -- family L: rewrite a corpus entry so that it exercises a taxonomy class -------------------
REWRITE_SYSTEM = """\
You are a mutation operator of a fuzzer of TorchDynamo, the Python frontend of
torch.compile. You receive one test program that runs correctly eagerly, and a class of
Dynamo bugs. Rewrite the program's compiled region (`fn`, what it calls, and what `drive`
does around its calls) so that it exercises that class, keeping everything else of the
program's shape: the same names (`fn`, `inputs`, `drive`, `state`, `COMPILE_KWARGS`
where they exist), the same form, still deterministic, CPU-only, small and fast, valid
eagerly. Do not call torch.compile. Answer with the whole rewritten program in one
```python block and nothing else."""


def rewrite_messages(cls: TaxonomyClass, source: str, *, form: str) -> list[dict[str, str]]:
    """The chat messages asking for a mutant of `source` that exercises class `cls`."""
    user = (f"Taxonomy class {cls.code}: {cls.title} (category: {cls.category}).\n"
            f"Definition and trigger shapes: {cls.text}\n\n"
            f"Rewrite this program ({form} form) so that its compiled region puts one of these trigger "
            f"shapes where Dynamo has to model it, changing as little else as you can:\n\n"
            f"```python\n{_cut(source)}```")
    return [{"role": "system", "content": REWRITE_SYSTEM}, {"role": "user", "content": user}]
