"""S: splices. A part of another program (the donor) used in the compiled region of this one,
as AFL++ splices two queue entries: the bugs found so far sit where two constructs meet.

Each operator takes one kind of part (a class, a decorator, a context manager, a container
subclass, a helper function) with what it needs (`_donor`: its imports, constants and
helpers, renamed where they clash), and makes the compiled code exercise it on the
recipient's own values: a class instantiated and its method or dunder called on a tensor
the region computes, a decorator on a function the region runs, a context manager around
some of its statements, a container subclass in place of one of its containers, a helper
called on one of its tensors. A call's arguments come from one of the donor's own calls
of the part where they are closed (literals, module-level names); the others, and those
of a call the donor never makes, are the recipient's tensor; a donor harness's own `fn`
(or its module) is called on the donor's inputs() with the recipient's tensor fitted to
their shapes. What the call returns goes to a module-level record (compared after every
call), unless the donor uses the part as a transform of its argument (`y = f(y, ...)`):
then it replaces the recipient's tensor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operator import Operator
from mutator.mutation.operators._blocks import TORCH_HANDLERS, WrapRun
from mutator.mutation.operators._donor import (Donor, Part, Transplant, accepts_positional, find_method,
                                               required_positional)
from mutator.mutation.operators._facts import FloatAssignmentSite, ProgramFacts
from mutator.mutation.operators._positions import ValueSites
from mutator.mutation.operators._templates import atom_code, build, define_helpers, record
from mutator.mutation.tree import DISPLAY_KINDS, code, dotted

VALUE = "__spliced_value__"  # stands for the recipient's value in a donor call until the site is known
MAX_ARGS = 4  # a call the donor never makes, with more required arguments than this, is not guessed
# The recipient's value in the place of one of the donor's inputs: its elements, repeated or
# cut to the input's shape and dtype where the input is a floating-point tensor.
_FIT = """
def $fit(value, like):
    if not (isinstance(like, torch.Tensor) and like.is_floating_point() and value.numel()):
        return like
    flat = value.reshape(-1).to(like.dtype)
    return flat.repeat(like.numel() // flat.numel() + 1)[:like.numel()].reshape(like.shape)
"""


@dataclass(frozen=True)
class Use:
    """What a splice copies from the donor besides the part: expressions (a decorator, a with
    item), the arguments of the call it writes (VALUE where the recipient's value goes; or,
    `fitted`, the donor's inputs() fitted from it), a class's constructor arguments and
    method, and whether the call's result replaces the recipient's value."""

    exprs: tuple[cst.BaseExpression, ...] = ()
    args: tuple[cst.Arg, ...] = ()
    ctor: tuple[cst.Arg, ...] = ()
    method: str = ""
    feedback: bool = False
    fitted: bool = False

    @property
    def copied(self) -> list[cst.CSTNode]:
        return [*self.exprs, *self.args, *self.ctor]


class Splice(Operator):
    """Base of the splices. The sites are the recipient's alone (the counting pass knows no
    donor); `choose_site` picks the part, what to copy with it and a site it fits, brings the
    part over, and leaves the rewrite only the recipient's side to write."""

    family = "S"
    NEEDS_DONOR = True
    KIND: ClassVar[str]  # the kind of part (`_donor.KINDS`)

    part: Part
    use: Use
    brought: Transplant

    def choose_site(self, candidates: list[cst.CSTNode]) -> cst.CSTNode | None:
        assert self.donor is not None, "apply() gives a splice its donor"
        donor = Donor.of(self.donor)
        parts = donor.parts[self.KIND]
        reason = f"the donor {donor.label} has no {self.KIND.replace('_', ' ')} to splice"
        for part in self.rng.sample(parts, len(parts)):
            sites = [c for c in candidates if self.fits(donor, part, c)]
            use = self.uses(donor, part) if sites else f"no site of the compiled region fits the donor's {part.name}"
            if isinstance(use, str):
                reason = use
                continue
            brought = donor.transplant(part, use.copied, recipient=self.ctx, names=self._names,
                                       also=("inputs",) if use.fitted else ())
            if isinstance(brought, str):
                reason = brought
                continue
            self.add_helper(brought.statements)
            self.part, self.use, self.brought = part, use, brought
            return self.rng.choice(sites)
        self.decline(reason)
        return None

    def fits(self, donor: Donor, part: Part, site: cst.CSTNode) -> bool:
        return True

    def uses(self, donor: Donor, part: Part) -> Use | str:
        """What the rewrite copies with `part`, or why the part cannot be used."""
        raise NotImplementedError

    # -- for the rewrite -------------------------------------------------------------------
    @property
    def new_name(self) -> str:
        return self.brought.name(self.part.name)

    def call(self, func: str, args: tuple[cst.Arg, ...], value: str) -> str:
        """`func(args)`, the donor's arguments renamed and the recipient's `value` in place of VALUE."""
        place = _Place(value)
        renamed = [self.brought.rename(a).visit(place) for a in args]  # type: ignore[arg-type]
        return code(cst.Call(cst.parse_expression(func), renamed))  # type: ignore[arg-type]

    def fitted_args(self, value: str) -> str:
        """The donor's inputs() as arguments, the recipient's `value` fitted to each of its
        floating-point tensors. They are made once, at load time: no RNG runs in the region."""
        inputs, arg = self.fresh("DONOR_INPUTS"), self.fresh("arg")
        self.add_helper(f"{inputs} = {self.brought.name('inputs')}()")
        return f"*[{define_helpers(self, _FIT)['fit']}({value}, {arg}) for {arg} in {inputs}]"

    def result(self, value: str, call: str, *, key: str = "") -> cst.BaseStatement:
        """The statement that keeps what `call` returns: it replaces `value` when the donor uses
        the part as a transform of its argument, else it goes to a record the oracle compares."""
        target = value if self.use.feedback else f'{record(self, "SPLICED")}["{key or self.part.name}"]'
        return cst.parse_statement(f"{target} = {call}\n")


class _Place(cst.CSTTransformer):
    def __init__(self, value: str) -> None:
        super().__init__()
        self.value = value

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return updated_node.with_changes(value=self.value) if updated_node.value == VALUE else updated_node


def donor_args(donor: Donor, calls: list[cst.Call], fn: cst.FunctionDef | None, *, skip: int,
               rng) -> tuple[tuple[cst.Arg, ...], bool] | None:  # type: ignore[no-untyped-def]
    """Arguments for a call of a donor function (or method, past `skip` parameters), with the
    recipient's value among them, and whether the donor assigns that call back to its argument:
    one of the donor's `calls` with what it computes locally replaced by VALUE; else VALUE for
    each parameter `fn` requires (one at least). None: no such call, and `fn` cannot be guessed."""
    for call in rng.sample(calls, len(calls)):
        args, placed = [], False
        for arg in call.args:
            if donor.closed(arg.value):
                args.append(arg)
            elif arg.star:
                break
            else:
                args.append(arg.with_changes(value=cst.Name(VALUE)))
                placed = True
        else:
            if placed:
                return tuple(args), id(call) in donor.rebinding
    if fn is None:
        return None
    required = required_positional(fn, skip=skip)
    if required is None or required > MAX_ARGS or not accepts_positional(fn, max(required, 1), skip=skip):
        return None
    return tuple(cst.Arg(cst.Name(VALUE)) for _ in range(max(required, 1))), False


class SpliceHelper(Splice, FloatAssignmentSite):
    name = "splice_helper"
    KIND = "helper"
    DESCRIPTION = ("Bring a helper function of another program (with the imports, constants and helpers it "
                   "reads) and call it on a floating-point tensor of the compiled region.")

    def accepts(self, fn: cst.FunctionDef, name: str, value: cst.BaseExpression) -> bool:
        return fn.name.value not in TORCH_HANDLERS

    def uses(self, donor: Donor, part: Part) -> Use | str:
        if part.node is donor.entry:
            return Use(fitted=True)
        fn: cst.FunctionDef = part.node  # type: ignore[assignment]
        found = donor_args(donor, donor.calls.get(part.name, []), fn, skip=0, rng=self.rng)
        if found is None:
            return f"the donor's {part.name} takes arguments that cannot be guessed"
        return Use(args=found[0], feedback=found[1])

    def follow(self, stmt: cst.SimpleStatementLine, fn: cst.FunctionDef, name: str,
               value: cst.BaseExpression) -> list[cst.BaseStatement]:
        call = f"{self.new_name}({self.fitted_args(name)})" if self.use.fitted else \
            self.call(self.new_name, self.use.args, name)
        return [stmt, self.result(name, call)]


# a dunder the class splice calls, and how: {obj} the instance, {a} the recipient's value
_DUNDERS = {"__call__": "", "__add__": "{obj} + {a}", "__radd__": "{a} + {obj}", "__sub__": "{obj} - {a}",
            "__rsub__": "{a} - {obj}", "__mul__": "{obj} * {a}", "__rmul__": "{a} * {obj}",
            "__truediv__": "{obj} / {a}", "__matmul__": "{obj} @ {a}"}
_NOT_CALLED = frozenset({"property", "setter", "getter", "deleter", "cached_property", "abstractmethod"})


class SpliceClass(Splice, FloatAssignmentSite):
    name = "splice_class"
    KIND = "class"
    DESCRIPTION = ("Bring a class of another program (with what it needs), instantiate it in the compiled "
                   "region or at module level, and call a method or dunder of it on a tensor there.")

    def accepts(self, fn: cst.FunctionDef, name: str, value: cst.BaseExpression) -> bool:
        return fn.name.value not in TORCH_HANDLERS

    def uses(self, donor: Donor, part: Part) -> Use | str:
        cls: cst.ClassDef = part.node  # type: ignore[assignment]
        classes = [s for s in donor.body if isinstance(s, cst.ClassDef)]
        if any((dotted(b.value) or "").rsplit(".", 1)[-1] == "Function" for b in cls.bases):
            calls = [c for c in donor.method_calls.get("apply", [])
                     if m.matches(c.func, m.Attribute(m.Name(part.name)))]
            found = donor_args(donor, calls, find_method(cls, "forward", classes), skip=1, rng=self.rng)
            return f"the donor's {part.name}.apply cannot be given arguments" if found is None else \
                Use(args=found[0], method="apply", feedback=found[1])
        ctor = self._constructor(donor, part, classes)
        if ctor is None:
            return f"the donor's {part.name} is built with arguments that cannot be guessed"
        if part.name == donor.entry_class:
            return Use(ctor=ctor, method="__call__", fitted=True)
        info = ProgramFacts.of(donor.ctx).classes.get(part.name)
        if info is not None and info.is_module:
            found = donor_args(donor, [], find_method(cls, "forward", classes), skip=1, rng=self.rng)
            return f"the donor's {part.name} has no forward to call" if found is None else \
                Use(args=found[0], ctor=ctor, method="__call__")
        methods = self._methods(cls, classes)
        for method in self.rng.sample(methods, len(methods)):
            fn = find_method(cls, method, classes)
            static = any(dotted(d.decorator) == "staticmethod" for d in fn.decorators)  # type: ignore[union-attr]
            if method in _DUNDERS and method != "__call__":
                if accepts_positional(fn, 1):  # type: ignore[arg-type]
                    return Use(args=(cst.Arg(cst.Name(VALUE)),), ctor=ctor, method=method)
                continue
            found = donor_args(donor, donor.method_calls.get(method, []), fn, skip=0 if static else 1, rng=self.rng)
            if found is not None:
                return Use(args=found[0], ctor=ctor, method=method, feedback=found[1])
        return f"no method of the donor's {part.name} can be called on a tensor"

    def _constructor(self, donor: Donor, part: Part, classes: list[cst.ClassDef]) -> tuple[cst.Arg, ...] | None:
        """Arguments to build the class with: a closed call of the donor's, or VALUE for each
        parameter its __init__ requires (none, for most modules and plain classes)."""
        built = [c for c in donor.calls.get(part.name, []) if all(donor.closed(a.value) for a in c.args)]
        if built:
            return tuple(self.rng.choice(built).args)
        init = find_method(part.node, "__init__", classes)  # type: ignore[arg-type]
        required = required_positional(init, skip=1) if init is not None else 0
        if required is None or required > MAX_ARGS:
            return None
        return tuple(cst.Arg(cst.Name(VALUE)) for _ in range(required))

    @staticmethod
    def _methods(cls: cst.ClassDef, classes: list[cst.ClassDef]) -> list[str]:
        found = []
        for klass in [cls, *classes]:  # its own first, then the file's others (bases among them)
            for stmt in klass.body.body:
                if not isinstance(stmt, cst.FunctionDef) or stmt.asynchronous or stmt.name.value in found:
                    continue
                decorators = {(dotted(d.decorator) or "").rsplit(".", 1)[-1] for d in stmt.decorators}
                name = stmt.name.value
                if (name in _DUNDERS or not name.startswith("_")) and not decorators & _NOT_CALLED \
                        and find_method(cls, name, classes) is stmt:
                    found.append(name)
        return found

    def follow(self, stmt: cst.SimpleStatementLine, fn: cst.FunctionDef, name: str,
               value: cst.BaseExpression) -> list[cst.BaseStatement]:
        use, cls = self.use, self.new_name
        key = f"{self.part.name}.{use.method}"
        if use.method == "apply":
            return [stmt, self.result(name, self.call(f"{cls}.apply", use.args, name), key=key)]
        new: list[cst.BaseStatement] = [stmt]
        ctor = self.call(cls, use.ctor, name)
        if not any(m.findall(a, m.Name(VALUE)) for a in use.ctor) and self.rng.random() < 0.5:
            obj = self.fresh(f"{cls.lower()}_instance")  # built at load time, a global the region reads
            self.add_helper(f"{obj} = {ctor}")
        else:
            obj = self.fresh("spliced")
            new.append(cst.parse_statement(f"{obj} = {ctor}\n"))
        template = _DUNDERS.get(use.method, "")
        if use.fitted:
            call = f"{obj}({self.fitted_args(name)})"
        elif use.method == "__call__":
            call = self.call(obj, use.args, name)
        elif template:
            call = template.format(obj=obj, a=name)
        else:
            call = self.call(f"{obj}.{use.method}", use.args, name)
        return [*new, self.result(name, call, key=key)]


_UNDECORATED = TORCH_HANDLERS | {"__init__", "__new__", "__init_subclass__", "__class_getitem__", "__set_name__",
                                 "__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__del__"}


class SpliceDecorator(Splice):
    name = "splice_decorator"
    KIND = "decorator"
    DESCRIPTION = ("Bring a decorator of another program (with what it needs) and apply it to a function or "
                   "method the compiled code runs.")

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if original_node.name.value in _UNDECORATED or original_node.asynchronous:
            return updated_node
        if not self.is_site(original_node):
            return updated_node
        expr = self.brought.rename(self.use.exprs[0]) if self.use.exprs else cst.Name(self.new_name)
        return updated_node.with_changes(decorators=[*updated_node.decorators, cst.Decorator(expr)])

    def fits(self, donor: Donor, part: Part, site: cst.CSTNode) -> bool:
        """A decorator the donor applies only to methods (or only to functions) goes on one."""
        on = {on_method for _, on_method in donor.decorations.get(part.name, [])}
        return not on or self._is_method(site) in on

    def _is_method(self, fn: cst.CSTNode) -> bool:
        block = self.ctx.parents.get(id(fn))
        return isinstance(self.ctx.parents.get(id(block)), cst.ClassDef)

    def uses(self, donor: Donor, part: Part) -> Use | str:
        applied = [d.decorator for d, _ in donor.decorations.get(part.name, [])]
        closed = [d for d in applied if donor.closed(d)]
        if closed:
            return Use(exprs=(self.rng.choice(closed),))
        if applied:
            return f"the donor applies {part.name} only with arguments it computes"
        return Use()  # decorator-shaped, never applied in the donor: @name


class SpliceContextManager(Splice, WrapRun):
    name = "splice_context_manager"
    KIND = "context_manager"
    DESCRIPTION = ("Bring a context manager of another program (a class, a mode or a @contextmanager generator, "
                   "with what it needs) and run a few statements of the compiled region under it.")

    def uses(self, donor: Donor, part: Part) -> Use | str:
        entered = [w.item for w in donor.with_items.get(part.name, []) if donor.closed(w.item)]
        if entered:
            return Use(exprs=(self.rng.choice(entered),))
        if isinstance(part.node, cst.FunctionDef):
            fn, skip = part.node, 0
        else:
            classes = [s for s in donor.body if isinstance(s, cst.ClassDef)]
            fn, skip = find_method(part.node, "__init__", classes), 1
        if fn is None or required_positional(fn, skip=skip) == 0:
            return Use()  # built without arguments
        return f"the donor enters its {part.name} only with arguments it computes"

    def wrap(self, run: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        context = self.brought.rename(self.use.exprs[0]) if self.use.exprs else cst.Call(cst.Name(self.new_name))
        return build("with CONTEXT:\n    RUN", CONTEXT=context, RUN=run)


_DISPLAY = m.List() | m.Tuple() | m.Set() | m.Dict() | m.ListComp() | m.SetComp() | m.DictComp()
_CONSTRUCTOR = m.Call(func=m.Name("list") | m.Name("tuple") | m.Name("dict") | m.Name("set") | m.Name("frozenset"))


class SpliceContainerSubclass(Splice, ValueSites):
    name = "splice_container_subclass"
    KIND = "container"
    DESCRIPTION = ("Bring a list, dict, set or tuple subclass of another program (with what it needs) and build "
                   "one of the compiled region's containers of that kind as it.")

    @m.leave(_DISPLAY | _CONSTRUCTOR)
    def _container(self, original_node: cst.BaseExpression, updated_node: cst.BaseExpression) -> cst.BaseExpression:
        if isinstance(original_node, cst.Call) and (
                len(original_node.args) > 1 or any(a.keyword or a.star for a in original_node.args)):
            return updated_node  # dict(a=1), list(*xs): the subclass's constructor may not take them
        if not self.value_site(original_node):
            return updated_node
        if isinstance(updated_node, cst.Call):
            return updated_node.with_changes(func=cst.Name(self.new_name))
        return cst.parse_expression(f"{self.new_name}({atom_code(updated_node)})")

    def fits(self, donor: Donor, part: Part, site: cst.CSTNode) -> bool:
        if isinstance(site, cst.Call):
            kind, count = site.func.value, len(site.args)  # type: ignore[attr-defined]
        else:
            kind, count = DISPLAY_KINDS[type(site)], 1
        if kind != part.container:
            return False
        classes = [s for s in donor.body if isinstance(s, cst.ClassDef)]
        own = (find_method(part.node, name, classes) for name in ("__init__", "__new__"))  # type: ignore[arg-type]
        return all(accepts_positional(fn, count) for fn in own if fn is not None)

    def uses(self, donor: Donor, part: Part) -> Use | str:
        return Use()
