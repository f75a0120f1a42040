"""C: iterator state.

The iterables a compiled region loops over (for loops, comprehensions, the argument of
sum/any/all/list/sorted/...) are routed through user generators, itertools and builtin
iterators; builtin iterator calls are swapped for siblings that compute the same thing;
loops are split into a partial consumption with next()/islice and a resumption of the
same iterator, sometimes across a graph break.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from mutator.mutation.operator import Operator
from mutator.mutation.operators._templates import atom_code, operand_code

# builtins whose first positional argument is only iterated; min/max only with one positional argument
_CONSUMERS = frozenset({"sum", "any", "all", "list", "tuple", "set", "frozenset", "sorted", "enumerate", "min", "max"})


def _simple_callable(node: cst.BaseExpression) -> bool:
    """A function reference that is cheap and harmless to evaluate once per item."""
    if isinstance(node, cst.Attribute):
        return _simple_callable(node.value)
    return isinstance(node, (cst.Name, cst.Lambda))


class _IterableSites(Operator):
    """Sites: the iterable of a for loop or comprehension clause, or an argument a builtin only iterates.

    `reroute(iterable, loop)` returns the new iterable's code and, for loop sites only, a
    function that rewrites the loop target (for wrappers like enumerate that add a field).
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._iterated_args: set[int] = set()

    def reroute(self, iterable: str, loop: bool) -> tuple[str, Callable[[str], str] | None]:
        raise NotImplementedError

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Name) or any(a.star or a.keyword for a in node.args[:1]):
            return
        positional = [a for a in node.args if a.keyword is None]
        name = node.func.value
        if name in _CONSUMERS and positional and not (name in ("min", "max") and len(positional) != 1):
            self._iterated_args.add(id(positional[0]))
        elif name == "zip":
            self._iterated_args.update(id(a) for a in positional if not a.star)
        elif name in ("map", "filter"):
            self._iterated_args.update(id(a) for a in positional[1:] if not a.star)

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        if id(original_node) not in self._iterated_args or not self.is_site(original_node.value):
            return updated_node
        code, _ = self.reroute(operand_code(updated_node.value), loop=False)
        return updated_node.with_changes(value=cst.parse_expression(code))

    def leave_For(self, original_node: cst.For, updated_node: cst.For) -> cst.For:
        return self._loop(original_node, updated_node)  # type: ignore[return-value]

    def leave_CompFor(self, original_node: cst.CompFor, updated_node: cst.CompFor) -> cst.CompFor:
        return self._loop(original_node, updated_node)  # type: ignore[return-value]

    def _loop(self, original_node: cst.For | cst.CompFor, updated_node: cst.For | cst.CompFor) -> cst.CSTNode:
        if original_node.asynchronous is not None or not self.is_site(original_node.iter):
            return updated_node
        code, retarget = self.reroute(operand_code(updated_node.iter), loop=True)
        changes: dict[str, cst.CSTNode] = {"iter": cst.parse_expression(code)}
        if retarget is not None:
            changes["target"] = cst.parse_expression(retarget(atom_code(updated_node.target)))
        return updated_node.with_changes(**changes)


_GENERATORS = {
    "for_yield": "def {g}(items):\n    for item in items:\n        yield item\n",
    "yield_from": "def {g}(items):\n    yield from items\n",
    "next_loop": ("def {g}(items):\n    it = iter(items)\n    while True:\n        try:\n            item = next(it)\n"
                  "        except StopIteration:\n            return\n        yield item\n"),
    "buffered": "def {g}(items):\n    buffer = list(items)\n    while buffer:\n        yield buffer.pop(0)\n",
    "nested": "def {g}(items):\n    yield from (item for item in items)\n",
    "iterator_class": ("class {g}:\n    def __init__(self, items):\n        self._it = iter(items)\n\n"
                       "    def __iter__(self):\n        return self\n\n"
                       "    def __next__(self):\n        return next(self._it)\n"),
}


class ThroughGenerator(_IterableSites):
    family = "C"
    name = "through_generator"
    DESCRIPTION = ("Route an iterable of the compiled region (for loop, comprehension, sum/any/all/list/... "
                   "argument) through a user generator function, generator expression or iterator class.")

    def reroute(self, iterable: str, loop: bool) -> tuple[str, None]:
        kind = self.rng.choice([*sorted(_GENERATORS), "genexp"])
        if kind == "genexp":
            item = self.fresh("item")
            return f"({item} for {item} in {iterable})", None
        name = self.fresh("Relay" if kind == "iterator_class" else "relay")
        self.add_helper(_GENERATORS[kind].format(g=name))
        return f"{name}({iterable})", None


# wrappers that yield the same items; {e} iterable, {v} {a} fresh names
_SAME_ITEMS = [
    "itertools.islice({e}, None)", "itertools.chain({e})", "itertools.chain.from_iterable(({e},))",
    "itertools.compress({e}, itertools.repeat(True))", "itertools.takewhile(lambda {v}: True, {e})",
    "itertools.dropwhile(lambda {v}: False, {e})", "itertools.filterfalse(lambda {v}: False, {e})",
    "itertools.accumulate({e}, lambda {a}, {v}: {v})", "itertools.tee({e}, 2)[0]",
    "map(lambda {v}: {v}, {e})", "filter(lambda {v}: True, {e})", "iter({e})",
]
# wrappers that add a field, with the loop target they need; {t} original target, {i} fresh name
_WIDENED = [
    ("enumerate({e})", "({i}, {t})"), ("zip({e}, itertools.count())", "({t}, {i})"),
    ("itertools.zip_longest({e})", "({t},)"), ("itertools.product({e})", "({t},)"),
    ("zip(itertools.repeat(None), {e})", "({i}, {t})"),
]


class ItertoolsRoute(_IterableSites):
    family = "C"
    name = "itertools_route"
    DESCRIPTION = ("Route an iterable of the compiled region through itertools or builtin iterators "
                   "(islice, chain, compress, accumulate, tee, map, filter, enumerate, zip, zip_longest, product).")

    def reroute(self, iterable: str, loop: bool) -> tuple[str, Callable[[str], str] | None]:
        self.add_import("itertools")
        if loop and self.rng.random() < 0.4:
            wrapper, target = self.rng.choice(_WIDENED)
            index = self.fresh("index")
            return wrapper.format(e=iterable), lambda t: target.format(t=t, i=index)
        wrapper = self.rng.choice(_SAME_ITEMS)
        return wrapper.format(e=iterable, v=self.fresh("item"), a=self.fresh("acc")), None


def _siblings(name: str, pos: list[cst.BaseExpression], kw: dict[str, str], fresh: Callable[[str], str]) -> list[str]:
    """Expressions that compute what `name(*pos, **kw)` computes (or are valid wherever it is)."""
    args = [operand_code(p) for p in pos]
    keywords = "".join(f", {k}={v}" for k, v in kw.items())
    v, i = fresh("item"), fresh("index")
    if name == "map" and len(args) >= 2 and not kw and _simple_callable(pos[0]):
        f, its = args[0], args[1:]
        names = [fresh("item") for _ in its]
        return [f"itertools.starmap({f}, zip({', '.join(its)}))",
                f"({f}({', '.join(names)}) for {', '.join(names)} in zip({', '.join(its)}))"]
    if name == "filter" and len(args) == 2 and not kw and (args[0] == "None" or _simple_callable(pos[0])):
        test = v if args[0] == "None" else f"{args[0]}({v})"
        return [f"({v} for {v} in {args[1]} if {test})", f"itertools.filterfalse(lambda {v}: not {test}, {args[1]})"]
    if name == "zip" and args and not kw:
        return [f"map(lambda *{v}: {v}, {', '.join(args)})", f"zip({', '.join(f'iter({a})' for a in args)})"]
    if name == "enumerate" and len(args) + len(kw) <= 2 and set(kw) <= {"start"} and args:
        start = args[1] if len(args) == 2 else kw.get("start", "0")
        return [f"zip(itertools.count({start}), {args[0]})",
                f"map(lambda {i}, {v}: ({i}, {v}), itertools.count({start}), {args[0]})"]
    if name == "reversed" and len(args) == 1 and not kw:
        return [f"reversed(list({args[0]}))", f"iter(list({args[0]})[::-1])", f"iter(tuple({args[0]})[::-1])"]
    if name == "sorted" and len(args) == 1 and set(kw) <= {"key", "reverse"}:
        return [f"sorted(list({args[0]}){keywords})", f"sorted(iter({args[0]}){keywords})",
                f"{{sort}}({args[0]}{keywords})"]
    if name == "sum" and 1 <= len(args) + len(kw) <= 2 and set(kw) <= {"start"} and args:
        start = args[1] if len(args) == 2 else kw.get("start", "0")
        return [f"functools.reduce(operator.add, {args[0]}, {start})", f"sum(iter({args[0]}), {start})"]
    if name in ("any", "all") and len(args) == 1 and not kw:
        if name == "any":
            return [f"next((True for {v} in {args[0]} if {v}), False)", f"(not all(not {v} for {v} in {args[0]}))"]
        return [f"next((False for {v} in {args[0]} if not {v}), True)", f"(not any(not {v} for {v} in {args[0]}))"]
    if name in ("min", "max") and len(args) == 1 and set(kw) <= {"key"}:
        order = "" if name == "min" else ", reverse=True"
        return [f"sorted({args[0]}{keywords}{order})[0]"]
    if name in ("list", "tuple") and len(args) == 1 and not kw:
        return [f"[*{args[0]}]" if name == "list" else f"(*{args[0]},)", f"{name}({v} for {v} in {args[0]})"]
    return []


_SORT_HELPER = ("def {name}(iterable, **options):\n    items = list(iterable)\n    items.sort(**options)\n"
                "    return items\n")


class BuiltinSibling(Operator):
    family = "C"
    name = "builtin_sibling"
    DESCRIPTION = ("Replace a map/filter/zip/enumerate/reversed/sorted/sum/any/all/min/max/list/tuple call "
                   "with a sibling iterator or builtin that computes the same thing.")

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not isinstance(original_node.func, cst.Name) or any(a.star for a in original_node.args):
            return updated_node
        pos = [a.value for a in updated_node.args if a.keyword is None]
        kw = {a.keyword.value: operand_code(a.value) for a in updated_node.args if a.keyword is not None}
        if not _siblings(original_node.func.value, pos, kw, lambda base: base) or not self.is_site(original_node):
            return updated_node
        choice = self.rng.choice(_siblings(original_node.func.value, pos, kw, self.fresh))
        for module in ("itertools", "functools", "operator"):
            if f"{module}." in choice:
                self.add_import(module)
        if "{sort}" in choice:
            helper = self.fresh("sorted_in_place")
            self.add_helper(_SORT_HELPER.format(name=helper))
            choice = choice.replace("{sort}", helper)
        return cst.parse_expression(choice)


class PartialConsume(Operator):
    family = "C"
    name = "partial_consume"
    DESCRIPTION = ("Split a for loop of the compiled region: take the first items of its iterator with "
                   "next(it, default)/islice/zip, then resume the same iterator in the loop.")

    GRAPH_BREAK = False

    def leave_For(self, original_node: cst.For,
                  updated_node: cst.For) -> cst.For | cst.FlattenSentinel[cst.BaseStatement]:
        if original_node.asynchronous is not None or not self.is_site(original_node):
            return updated_node
        it, head = self.fresh("it"), self.fresh("head")
        lines = [f"{it} = {self._iterator(operand_code(updated_node.iter))}"]
        k = self.rng.randint(1, 3)
        style = self.rng.randrange(4)
        if style in (0, 3):  # next() with a default: a sentinel says the iterator ran dry
            missing = self.fresh("missing")
            lines.append(f"{missing} = object()")
        if style == 0:
            lines += [f"{head} = next({it}, {missing})", f"{head} = () if {head} is {missing} else ({head},)"]
        elif style == 1:
            lines.append(f"{head} = list(itertools.islice({it}, {k}))")
        elif style == 2:
            item = self.fresh("item")
            lines.append(f"{head} = [{item} for _, {item} in zip(range({k}), {it})]")
        else:
            item = self.fresh("item")
            lines.append(f"{head} = [{item} for {item} in (next({it}, {missing}) for _ in range({k})) "
                         f"if {item} is not {missing}]")
        if self.GRAPH_BREAK:
            self.add_import("torch")
            lines.append("torch._dynamo.graph_break()")
        rest = self.rng.choice(["itertools.chain({h}, {i})", "[*{h}, *{i}]",
                                "itertools.chain.from_iterable(({h}, {i}))"])
        if any("itertools." in line for line in [*lines, rest]):
            self.add_import("itertools")
        statements = [cst.parse_statement(line + "\n") for line in lines]
        statements[0] = statements[0].with_changes(leading_lines=original_node.leading_lines)
        loop = updated_node.with_changes(iter=cst.parse_expression(rest.format(h=head, i=it)),
                                         leading_lines=[])
        return cst.FlattenSentinel([*statements, loop])

    def _iterator(self, iterable: str) -> str:
        return f"iter({iterable})"


class IteratorAcrossGraphBreak(PartialConsume):
    family = "C"
    name = "iterator_across_graph_break"
    DESCRIPTION = ("Create the iterator of a for loop of the compiled region (iter, generator expression, map, "
                   "filter), partially consume it, and resume it after a graph break.")

    GRAPH_BREAK = True

    def _iterator(self, iterable: str) -> str:
        v = self.fresh("item")
        return self.rng.choice([f"iter({iterable})", f"({v} for {v} in {iterable})",
                                f"map(lambda {v}: {v}, {iterable})",
                                f"filter(lambda {v}: True, {iterable})", f"iter(list({iterable}))"])
