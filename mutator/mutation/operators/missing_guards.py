"""G3: missing or incomplete guards.

Same-shaped calls are repeated under another grad mode or autocast, after a global list
or dict (or a closure's captured values) the region reads has changed, after the
module's parameters were updated or replaced, or with inputs that differ only in
requires_grad, strides or aliasing.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operators._driver import DriverOperator, has_result, indent, use_in_result
from mutator.mutation.operators._templates import parse_lines
from mutator.mutation.tree import attribute_reads, body_nodes, code


class GradModeBetweenCalls(DriverOperator):
    family = "G3"
    name = "grad_mode_between_calls"
    DESCRIPTION = "Repeat same-shaped calls under no_grad, set_grad_enabled(False), enable_grad and inference_mode."

    FORMS = (
        "with torch.no_grad():\n    {out}.append({call})",
        "torch.set_grad_enabled(False)\ntry:\n    {out}.append({call})\nfinally:\n    torch.set_grad_enabled(True)",
        "with torch.no_grad():\n    with torch.enable_grad():\n        {out}.append({call})",
        "with torch.set_grad_enabled(False):\n    {out}.append({call})",
        "with torch.inference_mode():\n    {out}.append({call})",
    )

    def extra_calls(self, f: str, out: str) -> str | None:
        call = f"{f}(*inputs())"  # fresh arguments: the program may change its inputs in place
        forms = self.rng.sample(self.FORMS, 2)
        self.add_import("torch")
        return "\n".join([f"{out}.append({call})",
                          *(form.format(out=out, call=call) for form in forms), f"{out}.append({call})"])

    def vary_script(self, stmt, call, entry):  # type: ignore[no-untyped-def]
        self.add_import("torch")
        form = self.rng.choice(["torch.no_grad()", "torch.set_grad_enabled(False)", "torch.inference_mode()"])
        return [cst.With([cst.WithItem(cst.parse_expression(form))], cst.IndentedBlock([stmt]))]


class AutocastBetweenCalls(DriverOperator):
    family = "G3"
    name = "autocast_between_calls"
    DESCRIPTION = "Repeat same-shaped calls inside and outside CPU autocast (bfloat16), and with autocast disabled."

    def extra_calls(self, f: str, out: str) -> str | None:
        call = f"{f}(*inputs())"
        inner = self.rng.choice(["", 'with torch.autocast("cpu", enabled=False):\n    '])
        self.add_import("torch")
        return (f"{out}.append({call})\n"
                f'with torch.autocast("cpu", dtype=torch.bfloat16):\n'
                f"{indent(inner + f'{out}.append({call})')}\n{out}.append({call})")

    def vary_script(self, stmt, call, entry):  # type: ignore[no-untyped-def]
        self.add_import("torch")
        return [cst.With([cst.WithItem(cst.parse_expression('torch.autocast("cpu", dtype=torch.bfloat16)'))],
                         cst.IndentedBlock([stmt]))]


class MutateReadContainer(DriverOperator):
    family = "G3"
    name = "mutate_read_container"
    DESCRIPTION = "Change the contents of a global list or dict (or a closure's captured values) the region reads, between same-shaped calls."

    def _containers(self) -> list[tuple[str, cst.BaseExpression]]:
        """(expression of a non-empty list or dict literal the region reads, that literal)."""
        found = {}
        for stmt in self.ctx.module.body:
            if m.matches(stmt, m.SimpleStatementLine([m.Assign([m.AssignTarget(m.Name())], m.List() | m.Dict())])):
                value = stmt.body[0].value
                if value.elements:
                    found[stmt.body[0].targets[0].target.value] = value
        read = {n.value for fn in self.ctx.region for n in body_nodes(fn) if isinstance(n, cst.Name)}
        found = {name: value for name, value in found.items() if name in read}
        for fn in self.ctx.region:
            owner = self.facts.owner_of(fn) if self.facts.is_method(fn) else None
            for holder, cls in self.facts.instances.items():
                if owner is not None and self.facts.classes[cls] is owner:
                    for attr in attribute_reads(fn, "self") & set(owner.containers):
                        found[f"{holder}.{attr}"] = owner.containers[attr]
        return [(name, value) for name, value in found.items() if self._edit(name, value)]

    def _closure(self) -> bool:
        """A harness whose fn is made by a factory: its captured cells are what it reads."""
        return self.ctx.is_harness and not self.ctx.entries

    def applicable(self) -> bool:
        return bool(self._containers()) or self._closure() or has_result(self.facts, self.entry())

    def _edit(self, name: str, value: cst.BaseExpression) -> list[str]:
        edits = []
        if isinstance(value, cst.List):
            first = value.elements[0].value
            if m.matches(first, m.Integer() | m.Float()) or self.facts.arg_info(first).kind == "float":
                edits += [f"{name}[0] = {name}[0] * 2 + 1", f"{name}.append({name}[-1])"]
        else:
            for element in value.elements:
                if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                    continue
                key, item = code(element.key), element.value
                if m.matches(item, m.Name("True") | m.Name("False")):
                    edits.append(f"{name}[{key}] = not {name}[{key}]")
                elif m.matches(item, m.Integer() | m.Float()) or self.facts.arg_info(item).kind == "float":
                    edits.append(f"{name}[{key}] = {name}[{key}] * 2 + 1")
                    if self.facts.arg_info(item).kind == "float":
                        edits.append(f"{name}[{key}].mul_(-1)")
        return edits

    def extra_calls(self, f: str, out: str) -> str | None:
        call = f"{f}(*inputs())"
        lines = [f"{out}.append({call})"]
        containers = self._containers()
        if not containers and not self._closure():  # introduce one: global factors applied to the result
            entry = self.entry()
            name, w, r = self.fresh("FACTORS"), self.fresh("w"), self.fresh("res")
            new = use_in_result(self.facts.facts(entry), entry, None, "",  # type: ignore[arg-type]
                                f"for {w} in {name}:\n    {r} = {r} * {w}", r)
            if new is None:
                self.decline("the region reads no global list or dict")
                return None
            self.rewrite_entry(entry, new)  # type: ignore[arg-type]
            self.add_helper(f"{name} = [1.0, 0.5]")
            containers = [(name, cst.parse_expression("[1.0, 0.5]"))]
        if containers and (not self._closure() or self.rng.random() < 0.5):
            name, value = self.rng.choice(containers)
            for edit in self.rng.sample(self._edit(name, value), min(2, len(self._edit(name, value)))):
                lines += [edit, f"{out}.append({call})"]
            return "\n".join(lines)
        cell, v = self.fresh("cell"), self.fresh("value")
        lines.append(
            f"for {cell} in getattr(fn, '__closure__', None) or ():\n"
            f"    {v} = {cell}.cell_contents\n"
            f"    if isinstance({v}, list) and {v} and isinstance({v}[0], (int, float)):\n"
            f"        {v}[0] = {v}[0] * 2 + 1\n"
            f"    elif isinstance({v}, dict):\n"
            f"        {v}.update({{k: not x for k, x in {v}.items() if isinstance(x, bool)}})\n"
            f"    elif isinstance({v}, float):\n"
            f"        {cell}.cell_contents = {v} * 0.5")
        lines.append(f"{out}.append({call})")
        return "\n".join(lines)

    def vary_script(self, stmt, call, entry):  # type: ignore[no-untyped-def]
        containers = self._containers()
        if not containers:
            self.decline("the region reads no global list or dict")
            return None
        name, value = self.rng.choice(containers)
        return [*parse_lines(self.rng.choice(self._edit(name, value))), stmt]


class UpdateModuleParams(DriverOperator):
    family = "G3"
    name = "update_module_params"
    DESCRIPTION = "Between same-shaped calls, update a module's parameters in place, replace them with new Parameters, or pass a changed copy."

    def _modules(self) -> list[tuple[str, int | None]]:
        """(expression of a module with parameters, its index in inputs() or None)."""
        found: list[tuple[str, int | None]] = []
        with_params = {n for n, c in self.facts.classes.items() if c.is_module and (c.layers or c.tensors)}
        if self.ctx.is_harness and self.facts.instances.get("fn") in with_params:
            found.append(("fn", None))
        read = {n.value for fn in self.ctx.region for n in body_nodes(fn) if isinstance(n, cst.Name)}
        found += [(g, None) for g, c in self.facts.instances.items() if c in with_params and g in read and g != "fn"]
        found += [(f"inputs()[{i}]", i) for i, a in enumerate(self.facts.inputs or [])
                  if a.kind == "object" and a.cls in with_params]
        return found

    def applicable(self) -> bool:
        return bool(self._modules())

    def _update(self, module: str) -> str:
        p, name, sub = self.fresh("p"), self.fresh("name"), self.fresh("sub")
        return self.rng.choice([
            f"with torch.no_grad():\n    for {p} in {module}.parameters():\n        {p}.mul_(-0.5)",
            f"with torch.no_grad():\n    for {p} in {module}.parameters():\n        {p}.add_(0.25)",
            (f"for {sub} in {module}.modules():\n    for {name}, {p} in list({sub}.named_parameters(recurse=False)):\n"
             f"        setattr({sub}, {name}, torch.nn.Parameter({p}.detach() * 0.5 + 0.1))"),
        ])

    def extra_calls(self, f: str, out: str) -> str | None:
        module, index = self.rng.choice(self._modules())
        args = self.fresh("args")
        self.add_import("torch")
        if index is None:
            return "\n".join([f"{out}.append({f}(*inputs()))", self._update(module), f"{out}.append({f}(*inputs()))"])
        other = self.fresh("other")
        self.add_import("copy")
        return "\n".join([f"{out}.append({f}(*inputs()))", f"{args} = list(inputs())",
                          f"{other} = copy.deepcopy({args}[{index}])", self._update(other), f"{args}[{index}] = {other}",
                          f"{out}.append({f}(*{args}))"])

    def vary_script(self, stmt, call, entry):  # type: ignore[no-untyped-def]
        modules = [m_ for m_, i in self._modules() if i is None]
        modules += [g for g, c in self.facts.instances.items()
                    if self.facts.classes[c].is_module and g not in modules and not self.ctx.is_harness]
        if not modules:
            self.decline("no module instance with parameters")
            return None
        self.add_import("torch")
        return [stmt, *parse_lines(self._update(self.rng.choice(modules)))]


class VaryTensorMetadata(DriverOperator):
    family = "G3"
    name = "vary_tensor_metadata"
    DESCRIPTION = "Repeat a call with equal-shaped tensors that differ in requires_grad, strides or aliasing (f(x, x))."

    def _forms(self) -> list[str]:
        args = self.facts.inputs or []
        floats = [i for i, a in enumerate(args) if a.kind == "float"]
        forms = []
        entry = self.entry()
        mutated = entry is not None and any(
            m.matches(n, m.Call(m.Attribute(attr=m.Name()))) and n.func.attr.value.endswith("_")
            and not n.func.attr.value.endswith("__") for n in body_nodes(entry))
        if floats and not mutated and not any(a.requires_grad for a in args):
            forms.append("grad")
        if any(args[i].shape and len(args[i].shape) >= 2 for i in floats):
            forms.append("strides")
        shapes = [args[i].shape for i in floats if args[i].shape]
        if len(shapes) != len(set(shapes)):
            forms.append("alias")
        return forms

    def applicable(self) -> bool:
        return bool(self._forms())

    def extra_calls(self, f: str, out: str) -> str | None:
        form = self.rng.choice(self._forms())
        args = self.fresh("args")
        inputs = self.facts.inputs or []
        floats = [k for k, x in enumerate(inputs) if x.kind == "float"]
        lines = [f"{out}.append({f}(*inputs()))", f"{args} = list(inputs())"]
        if form == "grad":
            k = self.rng.choice(floats)
            lines.append(f"{args}[{k}] = {args}[{k}].detach().requires_grad_(True)")
        elif form == "strides":
            k = self.rng.choice([k for k in floats if inputs[k].shape and len(inputs[k].shape) >= 2])
            lines.append(f"{args}[{k}] = {args}[{k}].transpose(0, -1).contiguous().transpose(0, -1)")
        else:
            by_shape: dict[tuple[int, ...], list[int]] = {}
            for k in floats:
                if inputs[k].shape:
                    by_shape.setdefault(inputs[k].shape, []).append(k)
            first, second = next(v for v in by_shape.values() if len(v) > 1)[:2]
            lines.append(f"{args}[{second}] = {args}[{first}]")
        lines.append(f"{out}.append({f}(*{args}))")
        return "\n".join(lines)
