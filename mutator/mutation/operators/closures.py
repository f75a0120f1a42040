"""E3: closures and captured variables.

The operators move a value of the compiled region through closure machinery: a nested
function or lambda reading the frame's variables as cells, a cell written with
`nonlocal`, a cell pair shared by two closures from a factory (created inside the frame
or before it, so the cell outlives the frame), a `functools.partial` object, and a
`functools.wraps` decorator whose wrapper counts calls in a closure cell.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operator import Operator
from mutator.mutation.operators._blocks import ValueOperator, ValueStatement
from mutator.mutation.operators._templates import build
from mutator.mutation.tree import mentions

UNMOVABLE_EXPR = m.Yield() | m.Await() | m.NamedExpr()  # change meaning when moved into a new function
# names whose meaning depends on the frame they are evaluated in
FRAME_BOUND = ("super", "locals", "vars", "dir", "eval", "exec", "globals", "__class__", "breakpoint")


def _movable_into_function(value: cst.BaseExpression) -> bool:
    """Can `value` be evaluated inside a new nested function with the same meaning?"""
    return not m.findall(value, UNMOVABLE_EXPR) and not mentions(value, *FRAME_BOUND)


class ExtractToClosure(ValueOperator):
    family = "E3"
    name = "extract_to_closure"
    DESCRIPTION = ("Compute a value of the compiled region in a nested function or lambda that captures the "
                   "frame's variables, called at once or returned from a nested factory.")

    def accepts(self, site: ValueStatement) -> bool:
        captures = m.findall(site.value, m.Name(m.MatchIfTrue(lambda n: n not in ("True", "False", "None"))))
        return bool(captures) and _movable_into_function(site.value)

    def rewrite(self, site: ValueStatement) -> list[cst.BaseStatement]:
        inner = self.fresh("compute")
        shape = self.rng.choice(("def", "lambda", "factory"))
        if shape == "def":
            code = f"def {inner}():\n    return VALUE\nSTMT"
        elif shape == "lambda":
            code = f"{inner} = lambda: VALUE\nSTMT"
        else:  # the closure escapes the factory frame that made it, its cells still live
            factory = self.fresh("make_compute")
            code = f"def {factory}():\n    return lambda: VALUE\n{inner} = {factory}()\nSTMT"
        return build(code, VALUE=site.value, STMT=[site.with_code(f"{inner}()")])


class NonlocalCell(ValueOperator):
    family = "E3"
    name = "nonlocal_cell"
    DESCRIPTION = ("Pass a value of the compiled region through a cell of the frame that a nested function "
                   "writes with nonlocal (and maybe a second nested function reads).")

    def rewrite(self, site: ValueStatement) -> list[cst.BaseStatement]:
        cell, put, get = self.fresh("cell"), self.fresh("put"), self.fresh("get")
        shape = self.rng.choice(("setter", "setter_getter", "computed") if _movable_into_function(site.value)
                                else ("setter", "setter_getter"))
        if shape == "computed":  # the value itself is computed inside the writing closure
            code = (f"{cell} = None\ndef {put}():\n    nonlocal {cell}\n    {cell} = VALUE\n"
                    f"{put}()\nSTMT")
            read = cell
        else:
            code = f"{cell} = None\ndef {put}(value):\n    nonlocal {cell}\n    {cell} = value\n"
            if shape == "setter_getter":
                code += f"def {get}():\n    return {cell}\n"
            code += f"{put}(VALUE)\nSTMT"
            read = f"{get}()" if shape == "setter_getter" else cell
        return build(code, VALUE=site.value, STMT=[site.with_code(read)])


class SharedCellFactory(ValueOperator):
    family = "E3"
    name = "shared_cell_factory"
    DESCRIPTION = ("Pass a value through a cell shared by a put/get closure pair from a module-level factory, "
                   "made inside the compiled frame or at import time (the cell outlives the frame).")

    def rewrite(self, site: ValueStatement) -> list[cst.BaseStatement]:
        factory = self.fresh("make_cell")
        self.add_helper(f"""
            def {factory}():
                value = None

                def put(new):
                    nonlocal value
                    value = new

                def get():
                    return value

                return put, get
        """)
        if self.rng.random() < 0.5:
            put, get = self.fresh("put_cell"), self.fresh("get_cell")
            code = f"{put}, {get} = {factory}()\n"
        else:
            put, get = self.fresh("PUT_CELL"), self.fresh("GET_CELL")
            self.add_helper(f"{put}, {get} = {factory}()")
            code = ""
        code += f"{put}(VALUE)\nSTMT"
        return build(code, VALUE=site.value, STMT=[site.with_code(f"{get}()")])


def _is_compile(func: cst.BaseExpression) -> bool:
    return m.matches(func, m.Attribute(attr=m.Name("compile") | m.Name("optimize")))


class CallThroughPartial(Operator):
    family = "E3"
    name = "call_through_partial"
    DESCRIPTION = "Call a callee of the compiled region through functools.partial holding a prefix of its arguments."

    @m.call_if_not_inside(m.Decorator())
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if mentions(original_node.func, *FRAME_BOUND) or _is_compile(original_node.func) \
                or m.matches(original_node.func, m.Attribute(value=m.Name("functools"), attr=m.Name("partial"))):
            return updated_node
        args = list(original_node.args)
        stars = [i for i, a in enumerate(args) if a.star]
        keywords = [i for i, a in enumerate(args) if a.keyword is not None]
        if stars and keywords and min(keywords) < max(stars):  # f(k=1, *rest): keep the odd order alone
            return updated_node
        if not self.is_site(original_node):
            return updated_node
        self.add_import("functools")
        args = list(updated_node.args)
        split = self.rng.randint(0, len(args))
        held = [a.with_changes(value=_parenthesized_generator(a.value), comma=cst.MaybeSentinel.DEFAULT)
                for a in args[:split]]
        partial = cst.Call(
            func=cst.parse_expression("functools.partial"),
            args=[cst.Arg(updated_node.func), *held],
        )
        rest = args[split:]
        if rest:
            rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated_node.with_changes(func=partial, args=rest)


def _parenthesized_generator(value: cst.BaseExpression) -> cst.BaseExpression:
    """`f(x for x in xs)` may drop the generator's parentheses only while it is the sole argument."""
    if isinstance(value, cst.GeneratorExp) and not value.lpar:
        return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return value


class WrapsDecorator(Operator):
    family = "E3"
    name = "wraps_decorator"
    DESCRIPTION = ("Decorate a function of the compiled region with a functools.wraps wrapper that counts calls "
                   "in a closure cell and records them in a module global.")

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
                          ) -> cst.FunctionDef:
        if original_node.asynchronous or not self.is_site(original_node):
            return updated_node
        self.add_import("functools")
        deco, calls = self.fresh("counted"), self.fresh("WRAPPER_CALLS")
        self.add_helper(f"{calls} = {{}}")
        shape = self.rng.choice(("plain", "factory"))
        if shape == "plain":
            self.add_helper(f"""
                def {deco}(func):
                    count = 0

                    @functools.wraps(func)
                    def wrapper(*args, **kwargs):
                        nonlocal count
                        count += 1
                        {calls}[func.__qualname__] = count
                        return func(*args, **kwargs)

                    return wrapper
            """)
            decorator = cst.Decorator(cst.Name(deco))
        else:  # a decorator factory: its argument is one more captured cell
            self.add_helper(f"""
                def {deco}(tag):
                    def decorate(func):
                        calls = [0]

                        @functools.wraps(func)
                        def wrapper(*args, **kwargs):
                            calls[0] += 1
                            {calls}[tag + func.__name__] = calls[0]
                            return func(*args, **kwargs)

                        return wrapper
                    return decorate
            """)
            decorator = cst.Decorator(cst.parse_expression(f'{deco}("{self.rng.choice("abc")}:")'))
        # innermost, so @staticmethod, @property and @torch.compile keep wrapping what they expect
        return updated_node.with_changes(decorators=[*updated_node.decorators, decorator])
