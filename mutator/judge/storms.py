"""Recompile storms that mean something (mutator/llm/taxonomy.md, G1, and "Symptoms").

Dynamo recompiling is not a bug by itself: guards specialise on Python scalars, tuples
and class attributes, on the identity of objects, on values computed after a graph
break, and a code object that sees more distinct states than `recompile_limit` stops
compiling. A storm is a frontend bug only when a code object recompiles on a call whose
*complete* state repeats an earlier call's exactly (the runtime's `signature`: inputs'
metadata with strides and dispatch keys and their Python values, since tensor values are
not guarded; the compiled module, closure or callable object; what the program's classes
hold and its functions close over; weak references' referents; grad, autocast and default-dtype modes, the
TorchFunctionModes active and DisableTorchFunction; RNG states; dynamic-shape marks,
`training` flags and hooks; every program global): its
guards then fail on the state they were built for, unless they guard the identity of an
object made afresh for the call, or the recompiled code object is not the call's own
but one Dynamo reached inside it (a resume function after a graph break, a
`__torch_function__`, a helper) whose arguments come from tensor values that differ
between the two calls: values computed after a graph break are specialised, as Dynamo
documents; or a resume function whose failing guard reads a value that was on the
interrupted frame's stack (`___stack1 == 1`): what the frame computed before the break
(a helper's result, a counter it bumped) is no part of the state the call began with,
which is all a signature holds. A code object that hits the recompile limit without a
real repeat is documented specialisation, kept apart at low severity with Dynamo's own
hint, unless the program had lowered the limit below Dynamo's default itself: reaching
it was its aim.

Pure and torch-free; counted per code object and per `torch._dynamo.reset()` epoch.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from mutator.core.features import normalize_reason
from mutator.core.observation import CallRecord, Observation, Recompile
from mutator.core.verdict import Verdict

IDENTITY_KINDS = frozenset({"object identity", "type identity", "function identity", "deallocated object", "backend"})
RESUME_PREFIX = "torch_dynamo_resume_in_"  # the code objects Dynamo makes to resume after a graph break
_TENSOR = re.compile(r"(size|stride|dtype|device|requires_grad|dispatch key set|storage offset|layout) mismatch")
_GLOBAL = re.compile(r"GLOBAL_STATE changed: ([\w ]+)")
_COMPARISON = re.compile(r"==|!=|\bis\b|<=|>=|<|>")
_STACK_VALUE = re.compile(r"\b___stack\d+\b")  # how a resume function names what was on the stack at the break


@dataclass(frozen=True, slots=True)
class Storm:
    verdict: Verdict  # RECOMPILE_STORM or SPECIALIZATION
    reason: str
    key: str  # what signs it: how it was found and the guard-failure kind, "repeat:tensor size mismatch"


def guard_kind(reason: str) -> str:
    """What kind of guard failed, without the program's names and constants."""
    if "___check_obj_id" in reason or "ID_MATCH" in reason:
        return "object identity"
    if "___check_type_id" in reason or "TYPE_MATCH" in reason:
        return "type identity"
    if "__code__" in reason or "FUNCTION_MATCH" in reason or "CLOSURE_MATCH" in reason:
        return "function identity"
    if "expected type of" in reason or "isinstance" in reason or "type(" in reason:
        return "type"
    if "deallocated" in reason or "invalidated" in reason:
        return "deallocated object"
    if "BACKEND_MATCH" in reason:
        return "backend"
    if match := _GLOBAL.search(reason):
        return f"global state {match.group(1).strip()}"
    if match := _TENSOR.search(reason):
        return f"tensor {match.group(1)} mismatch"
    if "len(" in reason:
        return "length"
    if "hasattr" in reason or "___dict_contains" in reason:
        return "attribute presence"
    if _COMPARISON.search(reason):
        return "value"
    return normalize_reason(reason)[:60]


def recompile_storm(observation: Observation) -> Storm | None:
    """The storm in a compiled run: a real one first, else documented specialisation, else None."""
    repeats: list[tuple[CallRecord, Recompile, CallRecord]] = []
    limits: dict[str, list[Recompile]] = defaultdict(list)
    compiles: dict[str, int] = defaultdict(int)
    seen: dict[int, dict[str, CallRecord]] = defaultdict(dict)  # reset epoch -> state -> first call with it
    for call in observation.calls:
        epoch = seen[call.resets]
        earlier = epoch.get(call.signature) if call.signature else None
        for recompile in call.recompiles:
            compiles[recompile.code] += 1
            if recompile.limit:
                limits[recompile.code].append(recompile)
            if earlier is not None:
                repeats.append((call, recompile, earlier))
        if call.signature:
            epoch.setdefault(call.signature, call)
    real = [r for r in repeats if not _documented(*r)]
    if real:
        call, recompile, earlier = real[0]
        kind = guard_kind(recompile.reason)
        return Storm(Verdict.RECOMPILE_STORM,
                     f"{recompile.code} recompiled on call {call.index + 1}, whose inputs and state repeat call "
                     f"{earlier.index + 1} exactly (guard failure: {recompile.reason})", f"repeat:{kind}")
    limits = {code: hits for code, hits in limits.items() if not all(hit.lowered for hit in hits)}
    if limits:  # a limit the program lowered itself was its aim (PyTorch's tests of the limit do so)
        code, hits = next(iter(limits.items()))
        last = hits[-1]
        kind = guard_kind(last.reason)
        documented = [r for r in repeats if r[1].code == code]
        why = ("on states that never repeat" if not documented else
               f"on calls whose state repeats, guarding the {kind} of objects made afresh for every call"
               if kind in IDENTITY_KINDS else
               "on values computed inside the calls before a graph break, on the interrupted frame's stack"
               if code.startswith(RESUME_PREFIX) and _STACK_VALUE.search(last.reason) else
               "on values computed from tensors inside the calls")
        return Storm(Verdict.SPECIALIZATION,
                     f"{code} hit Dynamo's recompile limit after {compiles[code]} recompilations {why}: documented "
                     f"specialisation (last guard failure: {last.reason}){_hint(last)}", f"limit:{kind}")
    return None


def _documented(call: CallRecord, recompile: Recompile, earlier: CallRecord) -> bool:
    """Whether documented specialisation explains recompiling on a repeated state."""
    if guard_kind(recompile.reason) in IDENTITY_KINDS:
        return True
    resumed = recompile.code.startswith(RESUME_PREFIX)
    if resumed and _STACK_VALUE.search(recompile.reason):  # a value computed inside the call
        return True
    inner = recompile.code != call.entry_code or resumed
    return inner and call.exact_signature != earlier.exact_signature  # fed by tensor values that changed


def _hint(recompile: Recompile) -> str:
    return f"; Dynamo's hint: {recompile.hint}" if recompile.hint else ""
