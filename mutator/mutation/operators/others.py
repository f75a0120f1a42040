"""O: the taxonomy's Others (keyword-named kwargs, id(), format(), mappingproxy and class __dict__ reads).

Every operator here keeps the program's values: the new construct computes the value
the old code did (an int through a format spec and back, a dict read through a
read-only view, an object through an identity map), so eager runs still complete and
any mis-modelling by Dynamo shows up as a different value. id() results only ever feed
comparisons and dict keys, never what the program returns or prints.
"""

from __future__ import annotations

import random

import libcst as cst
import libcst.matchers as m

from mutator.mutation.context import MutationContext
from mutator.mutation.operators._region import RegionOperator
from mutator.mutation.operators._templates import paren
from mutator.mutation.tree import binds, bound_names, code, names, nodes

# Python keywords (usable only as ** keys) and builtins (usable as, and shadowed by, parameter names)
_KEYWORD_KEYS = ("from", "lambda", "class", "if", "in", "def", "is", "not", "while", "for", "return", "import",
                 "global", "with", "as", "try", "except", "raise", "del", "yield", "pass", "else", "None")
_BUILTIN_PARAMS = ("len", "type", "id", "input", "min", "max", "sum", "format", "filter", "map", "iter", "hash",
                   "dir", "vars", "object", "str", "list", "dict", "range", "print", "next", "abs", "round")


class _ShadowAware(RegionOperator):
    """Base for operators that need node positions and to know which builtins a scope shadows."""

    def __init__(self, ctx: MutationContext, rng: random.Random) -> None:
        super().__init__(ctx, rng)
        # `import types` binds a module, not a shadowing name
        self._module_names = bound_names([s for s in ctx.module.body if not (
            isinstance(s, cst.SimpleStatementLine) and all(isinstance(b, cst.Import) for b in s.body))], scopes=False)
        self._scope_names: dict[int, set[str]] = {}

    def unshadowed(self, node: cst.CSTNode, *builtins: str) -> bool:
        """True when none of `builtins` is rebound by the module or by node's region function."""
        owner = self.map.owner_of(node)
        if owner is None:
            return False
        if id(owner) not in self._scope_names:
            self._scope_names[id(owner)] = self.map.bound(owner) | self._module_names
        return not set(builtins) & self._scope_names[id(owner)]


class KeywordNamedKwargs(_ShadowAware):
    family = "O"
    name = "keyword_named_kwargs"
    DESCRIPTION = ("Route a region call through a helper that takes its arguments as **{\"from\": ...} keys "
                   "and keyword-only parameters named like builtins.")

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        positional = [a for a in original_node.args if a.keyword is None]
        if (not 0 < len(positional) <= 8 or any(a.star for a in original_node.args)
                or not self.map.in_body(original_node) or self.map.in_fstring(original_node)
                or not self.is_site(original_node)):
            return updated_node
        keywords = [a for a in original_node.args if a.keyword is not None]
        taken = {a.keyword.value for a in keywords}  # type: ignore[union-attr]
        keys = self.rng.sample(_KEYWORD_KEYS, len(positional))
        params = self.rng.sample([p for p in _BUILTIN_PARAMS if p not in taken], len(positional))
        as_key = [self.rng.random() < 0.5 for _ in positional]
        # keyword-named values leave **kw by name; with other keywords in kw, pop them so the rest pass on
        reads = [(f'kw.pop("{k}")' if keywords else f'kw["{k}"]') if key else p
                 for k, p, key in zip(keys, params, as_key)]
        kwonly = [p for p, key in zip(params, as_key) if not key]
        helper = self.fresh("call_with_keywords")
        rest = ["**kw"] if keywords or any(as_key) else []
        signature = ", ".join(["callee", "/", *(["*", *kwonly] if kwonly else []), *rest])
        forward = ", ".join([*reads, *(["**kw"] if keywords else [])])
        self.add_helper(f"def {helper}({signature}):\n    return callee({forward})\n")
        args: list[str] = [code(paren(original_node.func))]
        run: list[str] = []  # consecutive keyword-named arguments share one dict display
        for arg, k, p, key in zip(positional, keys, params, as_key):
            value = code(paren(arg.value))
            if key:
                run.append(f'"{k}": {value}')
                continue
            if run:
                args.append("**{" + ", ".join(run) + "}")
                run = []
            args.append(f"{p}={value}")
        if run:
            args.append("**{" + ", ".join(run) + "}")
        args += [code(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for a in keywords]
        call = cst.parse_expression(f"{helper}({', '.join(args)})")
        return call.with_changes(lpar=original_node.lpar, rpar=original_node.rpar)  # type: ignore[return-value]


class IsToIdCompare(_ShadowAware):
    family = "O"
    name = "is_to_id_compare"
    DESCRIPTION = "Rewrite an identity test `a is b` / `a is not b` of the region as a comparison of id(a) and id(b)."

    def leave_Comparison(self, original_node: cst.Comparison, updated_node: cst.Comparison) -> cst.BaseExpression:
        if not (len(original_node.comparisons) == 1 and self.map.in_body(original_node)
                and isinstance(original_node.comparisons[0].operator, (cst.Is, cst.IsNot))
                and self.unshadowed(original_node, "id") and self.is_site(original_node)):
            return updated_node
        target = original_node.comparisons[0]
        left, right = code(paren(original_node.left)), code(paren(target.comparator))
        negated = isinstance(target.operator, cst.IsNot)
        if self.rng.random() < 0.5:
            text = f"id({left}) {'!=' if negated else '=='} id({right})"
        else:
            text = f"id({left}) {'not in' if negated else 'in'} {{id({right})}}"
        return cst.parse_expression(text).with_changes(lpar=original_node.lpar, rpar=original_node.rpar)


class IdIdentityMap(_ShadowAware):
    family = "O"
    name = "id_identity_map"
    DESCRIPTION = "Pass a local of the region through an id()-keyed map or identity test that yields the same object."

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine) -> cst.BaseStatement | cst.FlattenSentinel:
        plan = self._plan(original_node)
        if plan is None or not self.is_site(original_node):
            return updated_node
        t, others = plan
        u = self.rng.choice(others)
        form = self.rng.randrange(4)
        if form == 0:
            text = f"{t} = {{id({u}): {u}, id({t}): {t}}}[id({t})]"
        elif form == 1:
            text = f"{t} = [{u}, {t}][id({t}) != id({u})]"
        elif form == 2:
            text = f"{t} = next(obj for obj in ({u}, {t}) if id(obj) == id({t}))"
        else:
            text = f"{t} = {{id(obj): obj for obj in ({u}, {t})}}[id({t})]"
        return cst.FlattenSentinel([updated_node, cst.parse_statement(text + "\n")])

    def _plan(self, stmt: cst.SimpleStatementLine) -> tuple[str, list[str]] | None:
        """(name just assigned, names bound for sure at this point), when the name is read later."""
        owner = self.map.owner_of(stmt)
        if (owner is None or not self.map.in_body(stmt) or not m.matches(stmt, m.SimpleStatementLine(body=[m.Assign()]))
                or not isinstance(self.map.parent.get(id(stmt)), cst.IndentedBlock)
                or any(isinstance(a, (cst.FunctionDef, cst.Lambda)) and a is not owner
                       for a in self.map.ancestors(stmt))
                or not self.unshadowed(stmt, "id", "next")):
            return None
        assign = stmt.body[0]
        targets = [t.target for t in assign.targets if isinstance(t.target, cst.Name)]  # type: ignore[attr-defined]
        if not targets:
            return None
        target = targets[0].value
        inside = {id(n) for n in nodes(stmt)}
        read = self.map.names(owner)
        first = next(k for k, n in enumerate(read) if id(n) in inside)
        if target not in {n.value for n in read[first:] if id(n) not in inside}:
            return None  # the routed value must flow on
        available = [p.name.value for p in (*owner.params.posonly_params, *owner.params.params)]
        for top in owner.body.body:  # type: ignore[attr-defined]
            if any(n is stmt for n in nodes(top)):
                break
            if m.matches(top, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())])])):
                available.append(top.body[0].targets[0].target.value)  # type: ignore[attr-defined]
        others = [n for n in dict.fromkeys(available) if n != target]
        return target, others or [target]


class FormatRoundTrip(_ShadowAware):
    family = "O"
    name = "format_round_trip"
    DESCRIPTION = "Pass a number of the region (literal, len(), dim(), numel(), size(k), shape[k]) through a format spec."

    _INT_SOURCES = m.Integer() | m.Call(func=m.Name("len")) | m.Call(
        func=m.Attribute(attr=m.Name("dim") | m.Name("numel") | m.Name("ndimension")), args=[]) | m.Call(
        func=m.Attribute(attr=m.Name("size")), args=[m.Arg(keyword=None, star="")]) | m.Subscript(
        value=m.Attribute(attr=m.Name("shape")), slice=[m.SubscriptElement(slice=m.Index())]) | m.Attribute(
        attr=m.Name("ndim"))
    _INT_FORMS = ('int(f"{{({e}):d}}")', 'int(f"{{({e}):+05d}}")', 'int("{{:>6}}".format({e}))',
                  'int(format({e}, "x"), 16)', 'int(f"{{({e}):#b}}", 0)', 'int(f"{{({e}):_d}}".replace("_", ""))',
                  'int("{{0:o}}".format({e}), 8)')
    _FLOAT_FORMS = ('float(f"{{({e}):.17g}}")', 'float(format({e}, ".6f"))', 'float("{{:e}}".format({e}))',
                    'float(f"{{({e})!r}}")', 'float(f"{{({e}):+.10f}}")')

    # numbers come as literals, calls, subscripts and attributes
    def leave_Integer(self, original_node: cst.Integer, updated_node: cst.Integer) -> cst.BaseExpression:
        return self._round_trip(original_node, updated_node)

    def leave_Float(self, original_node: cst.Float, updated_node: cst.Float) -> cst.BaseExpression:
        return self._round_trip(original_node, updated_node)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        return self._round_trip(original_node, updated_node)

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.BaseExpression:
        return self._round_trip(original_node, updated_node)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return self._round_trip(original_node, updated_node)

    def _round_trip(self, original_node: cst.BaseExpression, updated_node: cst.BaseExpression) -> cst.BaseExpression:
        if not self.map.in_body(original_node) or not self._candidate(original_node) \
                or not self.is_site(original_node):
            return updated_node
        text = code(original_node.with_changes(lpar=[], rpar=[]))
        forms = self._INT_FORMS if not isinstance(original_node, cst.Float) else self._FLOAT_FORMS
        if '"' in text or "\\" in text or "\n" in text:  # would not nest in a double-quoted f-string
            forms = tuple(f for f in forms if 'f"' not in f)
        new = cst.parse_expression(self.rng.choice(forms).format(e=text))
        return new.with_changes(lpar=original_node.lpar, rpar=original_node.rpar)

    def _candidate(self, node: cst.BaseExpression) -> bool:
        if not (isinstance(node, cst.Float) or m.matches(node, self._INT_SOURCES)) or not self.map.in_body(node):
            return False
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and not self.unshadowed(node, "len"):
            return False
        if self.map.stored(node) or self.map.in_fstring(node):
            return False
        if any(isinstance(a, (cst.Annotation, cst.MatchCase)) for a in self.map.ancestors(node)):
            return False
        return self.unshadowed(node, "int", "float", "format")


class MappingProxyView(_ShadowAware):
    family = "O"
    name = "mappingproxy_view"
    DESCRIPTION = "Read a dict of the region through types.MappingProxyType (subscript, get/keys/items, **, in, for)."

    _READ_METHODS = frozenset({"get", "keys", "values", "items", "copy"})
    _READ_CALLS = frozenset({"len", "dict", "sorted", "list", "tuple", "set"})

    def __init__(self, ctx: MutationContext, rng: random.Random) -> None:
        super().__init__(ctx, rng)
        self._dict_globals = _fresh_dict_names(list(ctx.module.body)) - _declared_global(ctx.module)
        self._dict_attrs = _dict_attributes(ctx.module)
        self._dict_locals: dict[int, set[str]] = {}

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._wrap(original_node, updated_node)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return self._wrap(original_node, updated_node)

    def _wrap(self, original: cst.Name | cst.Attribute, updated: cst.BaseExpression) -> cst.BaseExpression:
        if not (self._is_dict(original) and self._read_position(original) and self.unshadowed(original, "types")) \
                or not self.is_site(original):
            return updated
        self.add_import("types")
        return cst.parse_expression(f"types.MappingProxyType({code(original)})")

    def _is_dict(self, node: cst.Name | cst.Attribute) -> bool:
        owner = self.map.owner_of(node)
        if owner is None or not self.map.in_body(node):
            return False
        if isinstance(node, cst.Attribute):
            return m.matches(node.value, m.Name("self")) and node.attr.value in self._dict_attrs
        if id(owner) not in self._dict_locals:
            self._dict_locals[id(owner)] = _fresh_dict_names(owner) - bound_names(owner.params)
        if node.value in self.map.bound(owner):
            return node.value in self._dict_locals[id(owner)]
        return node.value in self._dict_globals

    def _read_position(self, node: cst.BaseExpression) -> bool:
        parent = self.map.parent.get(id(node))
        grand = self.map.parent.get(id(parent)) if parent is not None else None
        if self.map.stored(node):
            return False
        if isinstance(parent, cst.Subscript) and parent.value is node:
            return not self.map.stored(parent)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return parent.attr.value in self._READ_METHODS and isinstance(grand, cst.Call) and grand.func is parent
        if isinstance(parent, (cst.StarredDictElement,)) or (isinstance(parent, cst.Arg) and parent.star == "**"):
            return True
        if isinstance(parent, cst.ComparisonTarget):
            return isinstance(parent.operator, (cst.In, cst.NotIn)) and parent.comparator is node
        if isinstance(parent, (cst.For, cst.CompFor)):
            return parent.iter is node
        if isinstance(parent, cst.Arg) and not parent.star and parent.keyword is None and isinstance(grand, cst.Call):
            func = grand.func
            return (isinstance(func, cst.Name) and func.value in self._READ_CALLS and len(grand.args) == 1
                    and self.unshadowed(node, func.value))
        return False


class ClassDictRead(_ShadowAware):
    family = "O"
    name = "class_dict_read"
    DESCRIPTION = "Read a class-level data attribute through Cls.__dict__, vars(Cls) or a MappingProxyType of it."

    def __init__(self, ctx: MutationContext, rng: random.Random) -> None:
        super().__init__(ctx, rng)
        self.classes = {c.name.value: c for c in ctx.module.body if isinstance(c, cst.ClassDef)}
        self.method_class = {id(item): c for c in self.classes.values() for item in c.body.body
                             if isinstance(item, cst.FunctionDef)}
        self.stores = _attribute_stores(ctx.module)
        self.class_names = {name: bound_names(list(c.body.body), scopes=False) for name, c in self.classes.items()}
        self.edits_dicts = "setattr(" in ctx.program.source or "__dict__" in ctx.program.source

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        cls = self._defining_class(original_node)
        if cls is None or not self.is_site(original_node):
            return updated_node
        owner, attr = cls.name.value, original_node.attr.value
        forms = [f'{owner}.__dict__["{attr}"]', f'{owner}.__dict__.get("{attr}")']
        if self.unshadowed(original_node, "vars"):
            forms.append(f'vars({owner})["{attr}"]')
        if self.unshadowed(original_node, "types"):
            forms.append(f'types.MappingProxyType({owner}.__dict__)["{attr}"]')
        text = self.rng.choice(forms)
        if text.startswith("types."):
            self.add_import("types")
        return cst.parse_expression(text).with_changes(lpar=original_node.lpar, rpar=original_node.rpar)

    def _defining_class(self, node: cst.Attribute) -> cst.ClassDef | None:
        """The class whose body defines `node.attr` as plain data, when reading it there is equivalent."""
        if not self.map.in_body(node) or not isinstance(node.value, cst.Name) or not self._load(node):
            return None
        attr = node.attr.value
        if node.value.value == "self":
            owner = self.map.owner_of(node)
            cls = self.method_class.get(id(owner)) if owner is not None else None
            if cls is None or self.edits_dicts or self.stores.get(attr, set()) - {cls.name.value}:
                return None  # an instance attribute of that name could shadow the class's
        else:
            cls = self.classes.get(node.value.value)
            owner = self.map.owner_of(node)
            if cls is None or owner is None or cls.name.value in self.map.bound(owner):
                return None
        definers = [name for name, bound in self.class_names.items() if attr in bound]
        if definers != [cls.name.value] or cls.keywords or "__getattribute__" in self.class_names[definers[0]] \
                or "del" in self.stores.get(attr, set()):
            return None
        defines = m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name(attr))])])
        values = [s.body[0].value for s in cls.body.body if m.matches(s, defines)]  # type: ignore[attr-defined]
        return cls if len(values) == 1 and _data(values[0]) else None

    def _load(self, node: cst.Attribute) -> bool:
        parent = self.map.parent.get(id(node))
        return not self.map.stored(node) and not self.map.in_fstring(node) \
            and not (isinstance(parent, cst.Call) and parent.func is node)


# -- helpers ----------------------------------------------------------------------------------------

def _fresh_dict(value: cst.BaseExpression | None) -> bool:
    return isinstance(value, (cst.Dict, cst.DictComp)) or m.matches(value, m.Call(func=m.Name("dict")))


def _fresh_dict_names(scope: cst.CSTNode | list) -> set[str]:  # type: ignore[type-arg]
    """Names that every binding in `scope` sets to a fresh dict (display, comprehension, dict(...))."""
    fresh: set[str] = set()
    other: set[str] = set()
    for n in nodes(scope):
        if isinstance(n, cst.Assign):
            targets = set().union(*(binds(t) for t in n.targets))
            plain = all(isinstance(t.target, cst.Name) for t in n.targets)
            (fresh if plain and _fresh_dict(n.value) else other).update(targets)
        elif isinstance(n, cst.Del):
            other |= {x.value for x in names(n)}
        elif not isinstance(n, cst.AssignTarget):
            other |= binds(n)
    return fresh - other


def _declared_global(module: cst.Module) -> set[str]:
    return {item.name.value for n in nodes(module) if isinstance(n, cst.Global) for item in n.names}


def _dict_attributes(module: cst.Module) -> set[str]:
    """Attribute names only ever assigned fresh dicts, and only on `self`."""
    fresh: set[str] = set()
    other: set[str] = set()
    for n in nodes(module):
        if isinstance(n, cst.Assign):
            for t in n.targets:
                if isinstance(t.target, cst.Attribute):
                    is_dict = m.matches(t.target.value, m.Name("self")) and _fresh_dict(n.value)
                    (fresh if is_dict else other).add(t.target.attr.value)
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign)) and isinstance(n.target, cst.Attribute):
            other.add(n.target.attr.value)
        elif isinstance(n, cst.Del):
            other |= {x.attr.value for x in nodes(n) if isinstance(x, cst.Attribute)}
    if "setattr(" in code(module) or "__dict__" in code(module):
        return set()
    return fresh - other


def _attribute_stores(module: cst.Module) -> dict[str, set[str]]:
    """attr -> what it is stored on or deleted from ('Cls' for a class name, '?' for anything else)."""
    stores: dict[str, set[str]] = {}
    for n in nodes(module):
        targets: list[cst.BaseExpression] = []
        if isinstance(n, cst.AssignTarget) or isinstance(n, (cst.AugAssign, cst.AnnAssign)):
            targets.append(n.target)
        elif isinstance(n, cst.Del):
            for x in nodes(n):
                if isinstance(x, cst.Attribute):
                    stores.setdefault(x.attr.value, set()).add("del")
        for t in targets:
            for x in nodes(t):
                if isinstance(x, cst.Attribute):
                    on = x.value.value if isinstance(x.value, cst.Name) and x.value.value != "self" else "?"
                    stores.setdefault(x.attr.value, set()).add(on)
    return stores


def _data(expr: cst.BaseExpression) -> bool:
    """A class-level value that is plain data (no descriptor can hide in it)."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(expr, cst.Name):
        return expr.value in {"True", "False", "None"}
    if isinstance(expr, cst.UnaryOperation):
        return _data(expr.expression)
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return all(_data(e.value) for e in expr.elements)
    if isinstance(expr, cst.Dict):
        return all(isinstance(e, cst.DictElement) and _data(e.key) and _data(e.value) for e in expr.elements)
    return isinstance(expr, cst.Call) and code(expr.func).startswith("torch.")
