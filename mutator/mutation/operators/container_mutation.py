"""B2: untracked container mutation.

The compiled region mutates containers in ways that are easy to lose track of: sibling
methods, `**` of custom mappings, mutation inside comprehensions, containers rebuilt
from iterators, and mutation while iterating over a snapshot.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operator import Operator
from mutator.mutation.operators._templates import atom_code, operand_code, parse_lines
from mutator.mutation.tree import DISPLAY_KINDS, code, is_stable


def _mentions(expr: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    """Whether `expr` may read `target` (a name, or an attribute of the same name)."""
    if isinstance(target, cst.Name):
        return bool(m.findall(expr, m.Name(target.value)))
    return bool(m.findall(expr, m.Attribute(attr=m.Name(target.attr.value))))  # type: ignore[attr-defined]


# method shape -> sibling templates. Fields: {r} receiver, {a0} {a1} arguments, {kw} ", key=..." keywords,
# {kwdict} / {kwpairs} the keywords as dict entries / pairs, {v} {k} fresh names.
# Flags: "R" receiver evaluated twice, "A" first argument evaluated twice, "S" only as an expression statement.
_SIBLINGS: dict[str, list[tuple[str, str]]] = {
    "append": [("{r}.extend(({a0},))", ""), ("{r}.extend(iter([{a0}]))", ""),
               ("{r}.insert(len({r}), {a0})", "R"), ("{r}.__iadd__([{a0}])", "S")],
    "extend": [("{r}.extend(list({a0}))", ""), ("{r}.__iadd__({a0})", "S"),
               ("[{r}.append({v}) for {v} in {a0}]", "RS"), ("{r}.extend({v} for {v} in {a0})", "")],
    "insert": [("{r}.__setitem__(slice({a0}, {a0}), [{a1}])", "A")],
    "add": [("{r}.update(({a0},))", ""), ("{r}.update([{a0}])", ""), ("{r}.__ior__({{{a0}}})", "S")],
    "discard": [("{r}.difference_update(({a0},))", ""), ("{r}.__isub__({{{a0}}})", "S"),
                ("({r}.remove({a0}) if {a0} in {r} else None)", "RA")],
    "update:kw": [("{r}.update({{{kwdict}}})", ""), ("{r}.update([{kwpairs}])", ""),
                  ("{r}.update(iter([{kwpairs}]))", "")],
    "update:dict": [("{r}.update(iter({a0}.items()))", ""), ("{r}.update(list({a0}.items()))", ""),
                    ("[{r}.__setitem__({k}, {v}) for {k}, {v} in {a0}.items()]", "RS")],
    "update:iter": [("{r}.update(list({a0}))", ""), ("{r}.update(tuple({a0}))", "")],
    "setdefault": [("(({r}.__setitem__({a0}, {a1}) if {a0} not in {r} else None) or {r}[{a0}])", "RA"),
                   ("({r}[{a0}] if {a0} in {r} else {r}.setdefault({a0}, {a1}))", "RA"),
                   ("(({r}.update({{{a0}: {a1}}}) if {a0} not in {r} else None) or {r}[{a0}])", "RA")],
    "get": [("({r}[{a0}] if {a0} in {r} else {a1})", "RA"),
            ("next(({v} for {k}, {v} in {r}.items() if {k} == {a0}), {a1})", "A"),
            ("{r}.setdefault({a0}, {a1})", "")],
    "pop": [("({r}.pop({a0}) if {a0} in {r} else {a1})", "RA"),
            ("next(({r}.pop({k}) for {k} in [{a0}] if {k} in {r}), {a1})", "R")],
    "popitem": [("(lambda {k}: ({k}, {r}.pop({k})))(next(reversed({r})))", "R"),
                ("(lambda {k}: ({k}, {r}.pop({k})))(list({r})[-1])", "R")],
    "copy": [("copy.copy({r})", "")],
    "sort": [("{r}.__setitem__(slice(None), sorted({r}{kw}))", "R")],
    "reverse": [("{r}.__setitem__(slice(None), {r}[::-1])", "R")],
}
# method -> (positional counts accepted, keywords accepted)
_ARITY = {"append": ({1}, ()), "extend": ({1}, ()), "insert": ({2}, ()), "add": ({1}, ()), "discard": ({1}, ()),
          "update": ({0, 1}, None), "setdefault": ({1, 2}, ()), "get": ({1, 2}, ()), "pop": ({2}, ()),
          "popitem": ({0}, ()), "copy": ({0}, ()), "sort": ({0}, ("key", "reverse")), "reverse": ({0}, ())}
_ITERABLE_ARG = (m.GeneratorExp() | m.ListComp() | m.List() | m.Tuple() | m.SetComp() | m.Set()
                 | m.Call(func=m.Name("zip") | m.Name("map") | m.Name("filter") | m.Name("enumerate")
                          | m.Name("iter") | m.Name("reversed") | m.Name("sorted")))


def _method_shape(call: cst.Call) -> str | None:
    """The _SIBLINGS key for `receiver.method(...)`, or None when the call's shape is not one we know."""
    method = call.func.attr.value  # type: ignore[attr-defined]
    if method not in _ARITY or any(a.star for a in call.args):
        return None
    positional = [a for a in call.args if a.keyword is None]
    keywords = [a.keyword.value for a in call.args if a.keyword is not None]
    counts, allowed = _ARITY[method]
    if len(positional) not in counts:
        return None
    if method != "update":
        return method if all(k in allowed for k in keywords) else None
    if not positional:
        return "update:kw" if keywords else None
    if keywords:
        return None
    if m.matches(positional[0].value, m.Dict() | m.DictComp()):
        return "update:dict"
    return "update:iter" if m.matches(positional[0].value, _ITERABLE_ARG) else None


class MethodSibling(Operator):
    family = "B2"
    name = "method_sibling"
    DESCRIPTION = ("Replace a list/dict/set method call (append, extend, insert, add, discard, update, setdefault, "
                   "get, pop, popitem, copy, sort, reverse) with a sibling spelling that keeps the program valid.")

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._statement_calls: set[int] = set()

    def visit_Expr(self, node: cst.Expr) -> None:
        self._statement_calls.add(id(node.value))

    @m.leave(m.Call(func=m.Attribute(attr=m.Name())))
    def _call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        shape = _method_shape(original_node)
        if shape is None:
            return updated_node
        receiver = original_node.func.value  # type: ignore[attr-defined]
        positional = [a.value for a in original_node.args if a.keyword is None]
        is_statement = id(original_node) in self._statement_calls
        usable = [(t, flags) for t, flags in _SIBLINGS[shape]
                  if ("R" not in flags or is_stable(receiver)) and ("A" not in flags or is_stable(positional[0]))
                  and ("S" not in flags or is_statement)]
        if not usable or not self.is_site(original_node):
            return updated_node
        template, _ = self.rng.choice(usable)
        args = [operand_code(a.value) for a in updated_node.args if a.keyword is None]
        keywords = [(a.keyword.value, code(a.value)) for a in updated_node.args if a.keyword is not None]
        if "copy.copy" in template:
            self.add_import("copy")
        text = template.format(
            r=code(updated_node.func.value),  # type: ignore[attr-defined]
            a0=args[0] if args else "", a1=args[1] if len(args) > 1 else "None",
            kw="".join(f", {k}={v}" for k, v in keywords),
            kwdict=", ".join(f"{k!r}: {v}" for k, v in keywords),
            kwpairs=", ".join(f"({k!r}, {v})" for k, v in keywords),
            v=self.fresh("item") if "{v}" in template else "", k=self.fresh("key") if "{k}" in template else "")
        return cst.parse_expression(text)


_MAPPINGS = {
    "abc_mapping": ("{cls}({kw})", """
        class {cls}(collections.abc.Mapping):
            \"\"\"A read-only mapping that is not a dict: `**` must go through keys() and __getitem__.\"\"\"

            def __init__(self, **entries):
                self._entries = entries

            def __getitem__(self, key):
                return self._entries[key]

            def __iter__(self):
                return iter(self._entries)

            def __len__(self):
                return len(self._entries)
    """),
    "dict_subclass": ("{cls}({kw})", """
        class {cls}(dict):
            def keys(self):
                return super().keys()

            def __getitem__(self, key):
                return super().__getitem__(key)
    """),
    "userdict": ("collections.UserDict({kw})", ""),
    "ordereddict": ("collections.OrderedDict({kw})", ""),
    "mappingproxy": ("types.MappingProxyType({{{kwdict}}})", ""),
    "chainmap": ("collections.ChainMap({{{head}}}, {{{tail}}})", ""),
}


class KwargsViaMapping(Operator):
    family = "B2"
    name = "kwargs_via_mapping"
    DESCRIPTION = ("Pass a call's keyword arguments through ** unpacking of a custom Mapping, dict subclass, "
                   "UserDict, OrderedDict, MappingProxyType or ChainMap.")

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not any(a.keyword is not None for a in original_node.args) or m.matches(original_node.func, m.Name("super")):
            return updated_node
        if not self.is_site(original_node):
            return updated_node
        keywords = [(a.keyword.value, code(a.value)) for a in updated_node.args if a.keyword is not None]
        kind = self.rng.choice(sorted(_MAPPINGS))
        template, helper = _MAPPINGS[kind]
        cls = self.fresh("KwargMapping") if helper else ""
        used = template + helper
        module = next((name for name in ("types", "collections.abc", "collections") if f"{name}." in used), None)
        if module:  # `import collections.abc` binds `collections` too
            self.add_import(module)
        if helper:
            self.add_helper(helper.format(cls=cls))
        split = self.rng.randint(0, len(keywords))
        entries = [f"{k!r}: {v}" for k, v in keywords]
        mapping = template.format(cls=cls, kw=", ".join(f"{k}={v}" for k, v in keywords), kwdict=", ".join(entries),
                                  head=", ".join(entries[:split]), tail=", ".join(entries[split:]))
        kept = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in updated_node.args if a.keyword is None]
        # `**` goes after every positional and `*` argument: f(**m, *a) is a syntax error
        at = max((i + 1 for i, a in enumerate(kept) if a.star != "**"), default=0)
        kept.insert(at, cst.Arg(cst.parse_expression(mapping), star="**"))
        return updated_node.with_changes(args=kept)


# mutation of a module-level sink inside a comprehension; {s} sink, {t} the loop target, {e} the element
_SINK_WRITES = {
    "list": ["({s}.append({t}) or {e})", "({s}.extend([{t}]) or {e})", "({s}.insert(0, {t}) or {e})"],
    "dict": ["({s}.__setitem__(len({s}), {t}) or {e})", "({s}.update({{len({s}): {t}}}) or {e})",
             "({s}.setdefault(len({s}), {t}), {e})[1]"],
}


class ComprehensionSideEffect(Operator):
    family = "B2"
    name = "comprehension_side_effect"
    DESCRIPTION = ("Make a comprehension or generator expression of the compiled region record its loop "
                   "variables into a module-level list or dict as it runs (in its element or its filter).")

    @m.leave(m.ListComp() | m.SetComp() | m.GeneratorExp() | m.DictComp())
    def _comprehension(self, original_node: cst.BaseComp, updated_node: cst.BaseComp) -> cst.BaseExpression:
        if not self.is_site(original_node):
            return updated_node
        innermost = updated_node.for_in
        while innermost.inner_for_in is not None:
            innermost = innermost.inner_for_in
        kind = self.rng.choice(sorted(_SINK_WRITES))
        sink = self.fresh("TRACE")
        self.add_helper(f"{sink} = {'[]' if kind == 'list' else '{}'}")
        target = atom_code(innermost.target)
        if self.rng.random() < 0.25:  # mutate in the filter instead of the element
            condition = cst.parse_expression(f"{sink}.append({target}) is None" if kind == "list"
                                             else f"{sink}.update({{len({sink}): {target}}}) is None")
            new_for = innermost.with_changes(ifs=[*innermost.ifs, cst.CompIf(condition)])
            return updated_node.deep_replace(innermost, new_for)  # type: ignore[return-value]
        write = self.rng.choice(_SINK_WRITES[kind])
        if isinstance(updated_node, cst.DictComp):
            return updated_node.with_changes(
                value=cst.parse_expression(write.format(s=sink, t=target, e=operand_code(updated_node.value))))
        element = write.format(s=sink, t=target, e=operand_code(updated_node.elt))
        return updated_node.with_changes(elt=cst.parse_expression(element))


class RebuildFromIterator(Operator):
    family = "B2"
    name = "rebuild_from_iterator"
    DESCRIPTION = ("Build a list/dict/set assigned in the compiled region by mutating an empty one: "
                   "extend/update from an iterator or generator, or append/add/__setitem__ in a loop.")

    PLAN = {  # kind -> (empty, ways to fill it from {src}: a code snippet over the element sequence)
        "list": ("[]", ["{t}.extend(iter({src}))", "{t}.extend({v} for {v} in {src})", "{t} += {src}",
                        "for {v} in {src}:\n    {t}.append({v})"]),
        "set": ("set()", ["{t}.update(iter({src}))", "for {v} in {src}:\n    {t}.add({v})", "{t} |= set({src})"]),
        "dict": ("{{}}", ["{t}.update(iter({src}))", "{t}.update(({k}, {v}) for {k}, {v} in {src})",
                          "for {k}, {v} in {src}:\n    {t}[{k}] = {v}"]),
        # dict(src): src is a mapping or an iterable of pairs, which update() and dict() both accept
        "mapping": ("{{}}", ["{t}.update({src})", "{t} |= dict({src})",
                             "for {k}, {v} in dict({src}).items():\n    {t}[{k}] = {v}"]),
    }

    SITE = m.SimpleStatementLine(body=[m.Assign(
        targets=[m.AssignTarget(m.Name() | m.Attribute())],
        value=m.List() | m.Set() | m.Dict() | m.ListComp() | m.SetComp() | m.DictComp()
        | m.Call(func=m.Name("list") | m.Name("set") | m.Name("dict"), args=[m.Arg(keyword=None, star="")]))])

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
                                  ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if not m.matches(original_node, self.SITE):
            return updated_node
        value = original_node.body[0].value  # type: ignore[attr-defined]
        target = original_node.body[0].targets[0].target  # type: ignore[attr-defined]
        if not is_stable(target) or _mentions(value, target) or not getattr(value, "elements", True):
            return updated_node
        if any(isinstance(e, (cst.StarredElement, cst.StarredDictElement)) for e in getattr(value, "elements", ())):
            return updated_node
        if not self.is_site(original_node):
            return updated_node
        kind, src = self._source(value)
        empty, fills = self.PLAN[kind]
        t = code(target)
        fill = self.rng.choice(fills)
        text = f"{t} = {empty.format()}\n" + fill.format(t=t, src=src, v=self.fresh("item"), k=self.fresh("key")) + "\n"
        first, *rest = parse_lines(text)
        return cst.FlattenSentinel([first.with_changes(leading_lines=original_node.leading_lines), *rest])

    @staticmethod
    def _source(value: cst.BaseExpression) -> tuple[str, str]:
        """The PLAN kind for `value` and the code of what its elements come from."""
        if isinstance(value, cst.Call):
            name = value.func.value  # type: ignore[attr-defined]
            return ("mapping" if name == "dict" else name), operand_code(value.args[0].value)
        if isinstance(value, (cst.ListComp, cst.SetComp)):
            return DISPLAY_KINDS[type(value)], f"({code(value.elt)} {code(value.for_in)})"
        if isinstance(value, cst.DictComp):
            return "dict", f"(({code(value.key)}, {code(value.value)}) {code(value.for_in)})"
        items = [f"({code(e.key)}, {code(e.value)})" if isinstance(value, cst.Dict) else code(e.value)
                 for e in value.elements]  # type: ignore[attr-defined]
        return DISPLAY_KINDS[type(value)], f"({', '.join(items)}{',' if len(items) == 1 else ''})"


_ROTATIONS = [
    "if isinstance(container, list) and container:\n        container.append(container.pop(0))",
    "if isinstance(container, list) and container:\n        container.insert(len(container), container.pop(0))",
    "if isinstance(container, list) and container:\n        container[:] = container[1:] + container[:1]",
]
_DICT_ROTATIONS = [
    "if isinstance(container, dict) and container:\n        key = next(iter(container))\n"
    "        container[key] = container.pop(key)",
    "if isinstance(container, dict) and container:\n        key = next(iter(container))\n"
    "        container.update([(key, container.pop(key))])",
]


class MutateWhileIterating(Operator):
    family = "B2"
    name = "mutate_while_iterating"
    DESCRIPTION = ("Iterate a snapshot of a list/dict in a for loop of the compiled region while rotating the "
                   "original in place each step (a full pass restores its order).")

    SNAPSHOTS = ("list({it})", "tuple({it})", "[*{it}]")
    VIEW = m.Call(func=m.Attribute(attr=m.Name("keys") | m.Name("items") | m.Name("values")), args=[])
    COPY = (m.Call(func=m.Name("list") | m.Name("tuple") | m.Name("sorted"), args=[m.Arg(keyword=None, star="")])
            | m.Call(func=m.Attribute(attr=m.Name("copy")), args=[])
            | m.Subscript(slice=[m.SubscriptElement(m.Slice(lower=None, upper=None, step=None))]))

    @m.leave(m.For(asynchronous=None))
    def _for(self, original_node: cst.For, updated_node: cst.For) -> cst.For:
        container, copied = original_node.iter, m.matches(original_node.iter, self.COPY)
        if copied:  # the loop already iterates a copy: only add the mutation
            container = container.args[0].value if isinstance(container, cst.Call) and container.args \
                else container.value  # type: ignore[attr-defined]
        if m.matches(container, self.VIEW):
            container = container.func.value  # type: ignore[attr-defined]
        if not (is_stable(container) and isinstance(container, (cst.Name, cst.Attribute))):
            return updated_node
        if not self.is_site(original_node):
            return updated_node
        helper = self.fresh("rotate_in_place")
        rotations = f"{self.rng.choice(_ROTATIONS)}\n    el{self.rng.choice(_DICT_ROTATIONS)}"
        self.add_helper(f"def {helper}(container):\n    \"\"\"Move the first item or key to the end.\"\"\"\n"
                        f"    {rotations}\n")
        snapshot = code(updated_node.iter) if copied else \
            self.rng.choice(self.SNAPSHOTS).format(it=operand_code(updated_node.iter))
        rotate = cst.parse_statement(f"{helper}({code(container)})\n")
        body = updated_node.body
        if isinstance(body, cst.IndentedBlock):
            body = body.with_changes(body=[rotate, *body.body])
        else:
            body = body.with_changes(body=[*rotate.body, *body.body])  # type: ignore[attr-defined]
        return updated_node.with_changes(iter=cst.parse_expression(snapshot), body=body)
