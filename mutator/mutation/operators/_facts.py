"""Static facts about one program, shared by the side-effect, guard and shape operators (no code is run).

`ProgramFacts` knows the program's classes (modules, open to new attributes or not, their
layers, tensors and scalars), what `inputs()` returns, which objects a function may
write attributes on, and each function's `TensorFacts`. It is computed once per tree and
shared by every operator applied to it. `FactsOperator` and `FloatAssignmentSite` are
the operator bases built on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
import libcst.matchers as m

from mutator.mutation.context import MutationContext
from mutator.mutation.operator import Operator
from mutator.mutation.operators._tensor_facts import CONSTRUCTORS, LITERAL, ArgInfo, TensorFacts, literal_arg
from mutator.mutation.tree import body_nodes, code, dotted, nodes

# Classes a receiver must not derive from: their instances refuse (or intercept) new attributes.
_CLOSED_BASES = frozenset({"tuple", "NamedTuple", "namedtuple", "list", "dict", "set", "str", "int", "float",
                           "Tensor", "Enum", "IntEnum", "frozenset", "bytes", "OrderedDict", "defaultdict",
                           "TypedDict", "Function", "type", "Exception", "BaseException"})
# Methods that must not set new attributes on self (attribute hooks, construction, dunders the runtime calls).
NO_ATTR_METHODS = frozenset({"__setattr__", "__getattr__", "__getattribute__", "__delattr__", "__new__",
                             "__init_subclass__", "__get__", "__set__", "__set_name__", "__delete__",
                             "__torch_function__", "__torch_dispatch__", "__class_getitem__", "__repr__",
                             "__str__", "__format__", "__hash__", "__eq__", "__ne__", "__init__",
                             "__post_init__", "backward"})
_TRANSFORMS = frozenset({"vmap", "grad", "grad_and_value", "jacrev", "jacfwd", "hessian", "vjp", "jvp",
                         "functional_call", "checkpoint"})


@dataclass
class ClassInfo:
    node: cst.ClassDef
    is_module: bool = False
    open: bool = True  # instances accept new attributes through plain setattr
    layers: dict[str, str] = field(default_factory=dict)  # self.lin = nn.Linear(...) -> {"lin": "Linear"}
    tensors: dict[str, bool] = field(default_factory=dict)  # parameters, buffers, tensor attributes -> is float
    scalars: dict[str, cst.BaseExpression] = field(default_factory=dict)  # self.k = <literal> in __init__
    class_scalars: dict[str, cst.BaseExpression] = field(default_factory=dict)  # k = <literal> in the body
    containers: dict[str, cst.BaseExpression] = field(default_factory=dict)  # self.k = [...] / {...} in __init__


class ProgramFacts:
    """Static facts about one program, computed from its tree (no code is run)."""

    @classmethod
    def of(cls, ctx: MutationContext) -> ProgramFacts:
        """The facts of `ctx`'s tree, shared by the operators applied to it (both passes, all operators)."""
        return ctx.fact(cls, cls)

    def __init__(self, ctx: MutationContext) -> None:
        self.ctx = ctx
        body = ctx.module.body
        self.classes = {s.name.value: ClassInfo(s) for s in body if isinstance(s, cst.ClassDef)}
        self.owner: dict[int, str] = {}
        for name, info in self.classes.items():
            for item in info.node.body.body:
                if isinstance(item, cst.FunctionDef):
                    self.owner[id(item)] = name
        for name in self.classes:
            self._describe(name)
        self.instances: dict[str, str] = {}  # top-level NAME = UserClass(...)
        for stmt in body:
            if m.matches(stmt, m.SimpleStatementLine([m.Assign([m.AssignTarget(m.Name())], m.Call(m.Name()))])):
                assign = stmt.body[0]
                if assign.value.func.value in self.classes:
                    self.instances[assign.targets[0].target.value] = assign.value.func.value
        self.inputs = self._inputs()
        self._facts: dict[int, TensorFacts] = {}
        self._receivers: dict[int, list[str]] = {}
        # functions handed to functorch transforms (vmap, grad, ...): no .data, no requires_grad_ there
        self.transformed: set[str] = set()
        # attribute names the program deletes or names in strings: their presence is not guaranteed
        self.fragile_attrs: set[str] = set()
        for node in nodes(ctx.module):
            if isinstance(node, cst.Call) and (dotted(node.func) or "").rsplit(".", 1)[-1] in _TRANSFORMS:
                self.transformed.update(n.value for a in node.args for n in nodes(a.value) if isinstance(n, cst.Name))
            elif isinstance(node, cst.Del):
                self.fragile_attrs.update(n.attr.value for n in nodes(node.target) if isinstance(n, cst.Attribute))
            elif isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str):
                self.fragile_attrs.add(node.evaluated_value)

    # -- classes ----------------------------------------------------------------------------
    def _describe(self, name: str) -> None:
        info = self.classes[name]
        for base in info.node.bases:
            base_name = dotted(base.value) or ""
            last = base_name.rsplit(".", 1)[-1]
            if base_name.startswith(("torch.nn.", "nn.")) or last == "Module":
                info.is_module = True
            elif last in self.classes and last != name:  # defined earlier, so already described
                info.is_module |= self.classes[last].is_module
                info.open &= self.classes[last].open
            if last in _CLOSED_BASES or isinstance(base.value, cst.Call):
                info.open = False
        for deco in info.node.decorators:
            text = code(deco.decorator)
            if "dataclass" in text and ("frozen" in text or "slots" in text):
                info.open = False
        for item in info.node.body.body:
            if isinstance(item, cst.FunctionDef) and item.name.value in ("__setattr__", "__delattr__",
                                                                         "__getattribute__"):
                info.open = False
            if isinstance(item, cst.SimpleStatementLine):
                for small in item.body:
                    if m.matches(small, m.Assign([m.AssignTarget(m.Name("__slots__"))])):
                        info.open = False
                    elif m.matches(small, m.Assign([m.AssignTarget(m.Name())], LITERAL)):
                        info.class_scalars[small.targets[0].target.value] = small.value
                    elif m.matches(small, m.AnnAssign(m.Name(), value=LITERAL)):
                        info.class_scalars[small.target.value] = small.value
            if isinstance(item, cst.FunctionDef) and item.name.value == "__init__":
                self._describe_init(info, item)

    def _describe_init(self, info: ClassInfo, init: cst.FunctionDef) -> None:
        for node in body_nodes(init):
            if m.matches(node, m.Assign([m.AssignTarget(m.Attribute(m.Name("self"), m.Name()))])):
                attr, value = node.targets[0].target.attr.value, node.value
                call = dotted(value.func) if isinstance(value, cst.Call) else None
                if call and call.rsplit(".", 1)[-1] == "Parameter":
                    info.tensors[attr] = True
                elif call and call.startswith(("torch.nn.", "nn.")):
                    info.layers[attr] = call.rsplit(".", 1)[-1]
                elif call and call.startswith("torch.") and call.rsplit(".", 1)[-1] in CONSTRUCTORS:
                    info.tensors[attr] = literal_arg(value).kind == "float"
                elif m.matches(value, LITERAL):
                    info.scalars[attr] = value
                elif isinstance(value, (cst.List, cst.Dict)) and value.elements:
                    info.containers[attr] = value
            elif m.matches(node, m.Call(m.Attribute(m.Name("self"), m.Name("register_buffer")),
                                        [m.Arg(m.SimpleString()), m.Arg(), m.ZeroOrMore()])):
                buffer = node.args[0].value.evaluated_value
                if isinstance(buffer, str):
                    info.tensors[buffer] = literal_arg(node.args[1].value).kind == "float"

    def owner_of(self, fn: cst.FunctionDef) -> ClassInfo | None:
        name = self.owner.get(id(fn))
        return self.classes.get(name) if name else None

    def is_method(self, fn: cst.FunctionDef) -> bool:
        return (id(fn) in self.owner and bool(fn.params.params) and fn.params.params[0].name.value == "self"
                and not any(dotted(d.decorator) in ("staticmethod", "classmethod") for d in fn.decorators))

    # -- inputs() ----------------------------------------------------------------------------
    def _inputs(self) -> list[ArgInfo] | None:
        node = self.ctx.top_level("inputs") if self.ctx.is_harness else None
        if not isinstance(node, cst.FunctionDef) or not isinstance(node.body, cst.IndentedBlock):
            return None
        last = node.body.body[-1]
        if not m.matches(last, m.SimpleStatementLine([m.Return(m.DoNotCare())])) or last.body[0].value is None:
            return None
        value = last.body[0].value
        elements = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
        if elements is None:
            return [self.arg_info(value)]
        if any(isinstance(e, cst.StarredElement) for e in elements):
            return None
        return [self.arg_info(e.value) for e in elements]

    def arg_info(self, expr: cst.BaseExpression) -> ArgInfo:
        info = literal_arg(expr)
        if info.kind != "unknown":
            return info
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in self.classes:
            return ArgInfo("object", expr, cls=expr.func.value)
        if isinstance(expr, cst.Name) and expr.value in self.instances:
            return ArgInfo("object", expr, cls=self.instances[expr.value])
        return info

    def entry_params(self, fn: cst.FunctionDef) -> dict[str, ArgInfo]:
        """Parameters of a harness entry, described by the matching inputs() elements."""
        if self.inputs is None or not any(fn is e for e in self.ctx.entries):
            return {}
        params = list(fn.params.params)
        if self.is_method(fn):
            params = params[1:]
        return {p.name.value: a for p, a in zip(params, self.inputs)}

    # -- functions ---------------------------------------------------------------------------
    def facts(self, fn: cst.FunctionDef) -> TensorFacts:
        if id(fn) not in self._facts:
            self._facts[id(fn)] = TensorFacts(fn, cls=self.owner_of(fn) if self.is_method(fn) else None,
                                              params=self.entry_params(fn))
        return self._facts[id(fn)]

    def receivers(self, fn: cst.FunctionDef) -> list[str]:
        """Expressions naming user objects or modules that `fn` may set attributes on."""
        if id(fn) not in self._receivers:
            self._receivers[id(fn)] = self._find_receivers(fn)
        return self._receivers[id(fn)]

    def _find_receivers(self, fn: cst.FunctionDef) -> list[str]:
        found: list[str] = []
        owner = self.owner_of(fn)
        if owner is not None and owner.open and self.is_method(fn) and fn.name.value not in NO_ATTR_METHODS:
            found.append("self")
        maybe_none = {n.left.value for n in body_nodes(fn) if m.matches(
            n, m.Comparison(m.Name(), [m.ComparisonTarget(m.Is() | m.IsNot() | m.Equal() | m.NotEqual(), m.Name("None"))]))}
        for name, arg in self.entry_params(fn).items():
            if arg.kind == "object" and self.classes[arg.cls].open and name not in maybe_none:
                found.append(name)
        local = self.facts(fn).assigned
        for node in body_nodes(fn):
            if isinstance(node, cst.Name) and node.value in self.instances and node.value not in local:
                if self.classes[self.instances[node.value]].open and node.value not in found:
                    found.append(node.value)
        return found

    def module_of(self, receiver: str, fn: cst.FunctionDef) -> ClassInfo | None:
        """The class of `receiver` as seen from `fn`, when it is known."""
        if receiver == "self":
            return self.owner_of(fn)
        arg = self.entry_params(fn).get(receiver)
        cls = arg.cls if arg is not None else self.instances.get(receiver)
        return self.classes.get(cls) if cls else None


class FactsOperator(Operator):
    """Base for operators that consult the program's `ProgramFacts` (as `self.facts`)."""

    def __init__(self, ctx: MutationContext, rng) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx, rng)
        self.facts = ProgramFacts.of(ctx)


class FloatAssignmentSite(FactsOperator):
    """Sites are `name = <floating-point tensor>` statements of the region; subclasses add what follows.

    `follow` returns the statements that replace the site (the original first, usually),
    or None to decline.
    """

    NEEDS_RECEIVER = False

    def __init__(self, ctx: MutationContext, rng) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx, rng)
        self._sites: dict[int, tuple[cst.FunctionDef, str, cst.BaseExpression]] = {}
        for fn in ctx.region:
            if self.NEEDS_RECEIVER and not self.facts.receivers(fn):
                continue
            for stmt, name, value in self.facts.facts(fn).float_assignments():
                if self.accepts(fn, name, value):
                    self._sites[id(stmt)] = (fn, name, value)

    def accepts(self, fn: cst.FunctionDef, name: str, value: cst.BaseExpression) -> bool:
        return True

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine) -> cst.BaseStatement | cst.FlattenSentinel:
        site = self._sites.get(id(original_node))
        if site is None or not self.is_site(original_node):
            return updated_node
        replacement = self.follow(updated_node, *site)
        if replacement is None:
            return updated_node
        return cst.FlattenSentinel(replacement)

    def follow(self, stmt: cst.SimpleStatementLine, fn: cst.FunctionDef, name: str,
               value: cst.BaseExpression) -> list[cst.BaseStatement] | None:
        raise NotImplementedError
