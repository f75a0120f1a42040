"""G2: over-specialisation of dynamic shapes (changing batch sizes, mark_dynamic, data-dependent sizes)."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operators._driver import DriverOperator
from mutator.mutation.operators._facts import FloatAssignmentSite
from mutator.mutation.operators._templates import parse_lines
from mutator.mutation.operators._tensor_facts import ArgInfo
from mutator.mutation.tree import dotted


def _batch(inputs: list[ArgInfo] | None) -> int | None:
    """The leading size shared by the tensor inputs, when every tensor's shape is known."""
    tensors = [a for a in inputs or [] if a.kind in ("float", "tensor")]
    if not tensors or any(a.shape is None for a in tensors):
        return None
    sized = [a.shape[0] for a in tensors if a.shape]
    return sized[0] if sized and sized[0] > 0 else None


class _Resize(cst.CSTTransformer):
    """Replace the leading size `batch` of tensor constructors by the name `n`."""

    def __init__(self, batch: int, n: str) -> None:
        super().__init__()
        self.batch, self.n, self.changed = batch, n, 0

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        name = dotted(updated_node.func) or ""
        if name not in ("torch.randn", "torch.rand", "torch.zeros", "torch.ones", "torch.empty", "torch.full"):
            return updated_node
        args = list(updated_node.args)
        if not args or args[0].keyword:
            return updated_node
        first = args[0].value
        if isinstance(first, (cst.Tuple, cst.List)) and first.elements:
            lead = first.elements[0].value
            if m.matches(lead, m.Integer()) and int(lead.value) == self.batch:
                elements = [first.elements[0].with_changes(value=cst.Name(self.n)), *first.elements[1:]]
                args[0] = args[0].with_changes(value=first.with_changes(elements=elements))
                self.changed += 1
        elif m.matches(first, m.Integer()) and int(first.value) == self.batch and name != "torch.full":
            args[0] = args[0].with_changes(value=cst.Name(self.n))
            self.changed += 1
        return updated_node.with_changes(args=args)


class _BatchedInputs(DriverOperator):
    """Shared by the G2 driver operators: an inputs(n) variant with the batch size as a parameter."""

    def applicable(self) -> bool:
        return _batch(self.facts.inputs) is not None

    def batched_inputs(self) -> tuple[str, int] | None:
        """Define `inputs_n(n)` (a copy of inputs() with the batch size as a parameter); (its name, batch)."""
        batch = _batch(self.facts.inputs)
        original = self.ctx.top_level("inputs")
        if batch is None or not isinstance(original, cst.FunctionDef) or original.params.params:
            self.decline("inputs() has tensors of unknown shape")
            return None
        name, n = self.fresh("inputs_batch"), self.fresh("n")
        resize = _Resize(batch, n)
        body = original.body.visit(resize)
        if not resize.changed:
            self.decline("no tensor constructor in inputs() has the batch size")
            return None
        fn = original.with_changes(name=cst.Name(name), params=cst.Parameters([cst.Param(cst.Name(n))]), body=body,
                                   leading_lines=())
        self.append_to_module(cst.Module([fn]).code)
        return name, batch


class BatchSizeSweep(_BatchedInputs):
    family = "G2"
    name = "batch_size_sweep"
    DESCRIPTION = "Call the compiled function again with the batch dimension of its tensor inputs changed (larger, odd, back again)."

    def extra_calls(self, f: str, out: str) -> str | None:
        made = self.batched_inputs()
        if made is None:
            return None
        inputs_n, b = made
        sizes = tuple(dict.fromkeys(self.rng.choice([(b + 1, 2 * b, b), (2 * b, b + 3, b + 1), (b + 3, b)])))
        n = self.fresh("size")
        return f"for {n} in {sizes!r}:\n    {out}.append({f}(*{inputs_n}({n})))"


class MarkDynamicInput(_BatchedInputs):
    family = "G2"
    name = "mark_dynamic_input"
    DESCRIPTION = "Mark a dimension of a tensor input dynamic (torch._dynamo.maybe_mark_dynamic) and call with that size varied."

    def applicable(self) -> bool:
        return any(a.kind in ("float", "tensor") and a.shape for a in self.facts.inputs or [])

    def extra_calls(self, f: str, out: str) -> str | None:
        inputs = self.facts.inputs or []
        dims = [(i, d) for i, a in enumerate(inputs) if a.kind in ("float", "tensor") and a.shape
                for d in range(len(a.shape)) if a.shape[d] > 1]
        if not dims:
            self.decline("no tensor input with a dimension larger than 1")
            return None
        i, d = self.rng.choice(dims)
        args, n = self.fresh("args"), self.fresh("size")
        made = self.batched_inputs() if d == 0 and _batch(inputs) == inputs[i].shape[0] else None  # type: ignore[index]
        self.declined = None  # without a batched inputs(), the same sizes are marked instead
        self.add_import("torch")
        mark = f"torch._dynamo.maybe_mark_dynamic({args}[{i}], {d})"
        if made is None:  # the size stays; marking still changes how the frame is traced
            return (f"for _ in range(2):\n    {args} = inputs()\n    {mark}\n"
                    f"    {out}.append({f}(*{args}))")
        inputs_n, b = made
        return (f"for {n} in {(b, b + 1, 2 * b + 1)!r}:\n    {args} = {inputs_n}({n})\n    {mark}\n"
                f"    {out}.append({f}(*{args}))")

    def vary_script(self, stmt, call, entry):  # type: ignore[no-untyped-def]
        names = [a.value.value for a in call.args if isinstance(a.value, cst.Name) and not a.keyword]
        if not names:
            self.decline("the compiled call passes no named arguments")
            return None
        t = self.fresh("arg")
        self.add_import("torch")
        return parse_lines(f"for {t} in ({', '.join(names)},):\n"
                           f"    if isinstance({t}, torch.Tensor) and {t}.dim() > 0:\n"
                           f"        torch._dynamo.maybe_mark_dynamic({t}, 0)")


class DataDependentSize(FloatAssignmentSite):
    family = "G2"
    name = "data_dependent_size"
    DESCRIPTION = "Derive a size from tensor data inside the region (nonzero, boolean mask, int(t.sum()), unique) and use it."

    def accepts(self, fn, name, value):  # type: ignore[no-untyped-def]
        return fn.name.value not in self.facts.transformed

    def follow(self, stmt, fn, name, value):  # type: ignore[no-untyped-def]
        aux = self.fresh(f"{name}_picked")
        forms = [
            f"{aux} = ({name}.detach().flatten() > 0).nonzero()\n{name} = {name} + {aux}.shape[0]",
            f"{aux} = {name}.flatten()[{name}.flatten() > 0]\n{name} = {name} + {aux}.sum()",
            f"{aux} = int(({name} > 0).sum())\n{name} = {name} + torch.ones({aux}).sum()",
            f"{aux} = torch.unique({name}.detach().round())\n{name} = {name} + {aux}.numel()",
            f"{aux} = torch.masked_select({name}, {name} > 0)\n{name} = {name} + {aux}.numel() * 0.5",
        ]
        self.add_import("torch")
        return [stmt, *parse_lines(self.rng.choice(forms))]


class SizeArithmetic(FloatAssignmentSite):
    family = "G2"
    name = "size_arithmetic"
    DESCRIPTION = "Use a tensor's sizes in arithmetic and branches inside the region (floor division, modulo, size tests)."

    def follow(self, stmt, fn, name, value):  # type: ignore[no-untyped-def]
        forms = [
            f"{name} = {name} * ({name}.numel() // 2 + 1)",
            f"{name} = {name} + {name}.numel() % 3",
            f"{name} = {name} / max({name}.numel() // 4, 1)",
            f"if {name}.numel() > 8:\n    {name} = {name} * 0.5",
            f"if {name}.dim() > 0 and {name}.shape[0] % 2 == 1:\n    {name} = {name} - 1",
        ]
        return [stmt, *parse_lines(self.rng.choice(forms))]

