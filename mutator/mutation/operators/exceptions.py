"""E2: exception handling.

Every operator here makes a value of the compiled region travel through an exception
(its payload, its `__cause__`/`__context__`, a handler that recovers it), or wraps
region code in a try statement whose clauses record what ran in a module global, so a
mis-modelled raise, catch or unwind shows up in results or globals.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operators._blocks import ValueOperator, ValueStatement, WrapRun
from mutator.mutation.operators._templates import build, record

CATCHABLE = ("ValueError", "RuntimeError", "KeyError", "AttributeError", "Exception", "(TypeError, IndexError)")
GRAPH_BREAK = "torch._dynamo.graph_break()"


def _carrier(op: ValueOperator, base: str = "Exception") -> str:
    """A module-level exception class carrying a value in `.payload`; returns its name."""
    cls = op.fresh("Carrier")
    op.add_helper(f"""
        class {cls}({base}):
            def __init__(self, payload, note="carried"):
                super().__init__(note)
                self.payload = payload
    """)
    return cls


class WrapInTry(WrapRun):
    family = "E2"
    name = "wrap_in_try"
    DESCRIPTION = ("Wrap statements of the compiled region in try/except/else/finally whose handler re-raises "
                   "and whose clauses record in a module global.")

    def wrap(self, run: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        log, err = record(self, "TRY_LOG"), self.fresh("err")
        caught = self.rng.choice(CATCHABLE)
        shapes = [
            f"except {caught}:\n    {log}['except'] = True\n    raise",
            f"finally:\n    {log}['finally'] = True",
            f"except {caught} as {err}:\n    {log}[type({err}).__name__] = True\n    raise\n"
            f"else:\n    {log}['else'] = True\nfinally:\n    {log}['finally'] = True",
            # re-raised by name, not bare: the region's own handlers further out still see their type
            f"except {caught} as {err}:\n    {log}['reraised'] = True\n    raise {err}\n"
            f"else:\n    {log}['else'] = len({log})",
        ]
        if m.matches(run[-1], m.SimpleStatementLine(body=[m.Return() | m.Raise()])):
            shapes = shapes[:2]  # an else clause after a return never runs
        clauses = self.rng.choice(shapes)
        return build(f"try:\n    RUN\n{clauses}", RUN=run)


class RaiseAndCatch(ValueOperator):
    family = "E2"
    name = "raise_and_catch"
    DESCRIPTION = ("Route a value of the compiled region through an exception raised and caught inside it "
                   "(custom payload class or a builtin's args; caught by class, base class or tuple).")

    def rewrite(self, site: ValueStatement) -> list[cst.BaseStatement]:
        err = self.fresh("err")
        style = self.rng.choice(("custom", "base", "tuple", "builtin", "helper"))
        if style == "builtin":
            make, caught, payload = "ValueError", "ValueError", f"{err}.args[0]"
        else:
            make = _carrier(self, "LookupError" if style == "base" else "Exception")
            payload = f"{err}.payload"
            caught = {"base": "LookupError", "tuple": f"(KeyError, {make})"}.get(style, make)
        if style == "helper":  # raised one frame down, caught in the region function
            thrower = self.fresh("throw")
            self.add_helper(f"def {thrower}(value):\n    raise {make}(value)\n")
            raising = f"{thrower}(VALUE)"
        else:
            raising = f"raise {make}(VALUE)"
        return build(f"try:\n    {raising}\nexcept {caught} as {err}:\n    HANDLER",
                     VALUE=site.value, HANDLER=[site.with_code(payload)])


class RaiseFromChain(ValueOperator):
    family = "E2"
    name = "raise_from_chain"
    DESCRIPTION = ("Route a value through a chained exception: caught and re-raised as another type "
                   "(raise ... from e, implicit context, from None), read back from __cause__/__context__.")

    def rewrite(self, site: ValueStatement) -> list[cst.BaseStatement]:
        inner = _carrier(self)
        outer = self.fresh("StageError")
        self.add_helper(f"class {outer}(RuntimeError):\n    pass\n")
        e, err = self.fresh("e"), self.fresh("err")
        link, origin = self.rng.choice(((f" from {e}", "__cause__"), ("", "__context__"),
                                        (" from None", "__context__")))
        return build(f"""
            try:
                try:
                    raise {inner}(VALUE)
                except {inner} as {e}:
                    raise {outer}("stage failed"){link}
            except {outer} as {err}:
                HANDLER
        """, VALUE=site.value, HANDLER=[site.with_code(f"{err}.{origin}.payload")])


class ExceptionAcrossGraphBreak(ValueOperator):
    family = "E2"
    name = "exception_across_graph_break"
    DESCRIPTION = ("Route a value through an exception with a graph break between computing and raising it, "
                   "in the raising helper, in the handler, or in a finally clause.")

    def rewrite(self, site: ValueStatement) -> list[cst.BaseStatement]:
        self.add_import("torch")
        cls = _carrier(self)
        value, err = self.fresh("value"), self.fresh("err")
        where = self.rng.choice(("before_raise", "in_helper", "in_handler", "in_finally"))
        if where == "before_raise":
            body = f"{value} = VALUE\n    {GRAPH_BREAK}\n    raise {cls}({value})"
        elif where == "in_helper":
            thrower = self.fresh("throw_after_break")
            self.add_helper(f"def {thrower}(value):\n    {GRAPH_BREAK}\n    raise {cls}(value)\n")
            body = f"{thrower}(VALUE)"
        else:
            body = f"raise {cls}(VALUE)"
        handler = f"    {GRAPH_BREAK}\n    HANDLER" if where == "in_handler" else "    HANDLER"
        code = f"try:\n    {body}\nexcept {cls} as {err}:\n{handler}\n"
        if where == "in_finally":
            code += f"finally:\n    {GRAPH_BREAK}\n    {record(self, 'FINALLY_LOG')}['finally'] = True\n"
        return build(code, VALUE=site.value, HANDLER=[site.with_code(f"{err}.payload")])


class CatchBuiltinError(ValueOperator):
    family = "E2"
    name = "catch_builtin_error"
    DESCRIPTION = ("Make the region hit a real AttributeError, KeyError, IndexError or StopIteration on the way "
                   "to a value and recover the value in the handler, logging the caught type.")

    def rewrite(self, site: ValueStatement) -> list[cst.BaseStatement]:
        box, err = self.fresh("box"), self.fresh("err")
        log = record(self, "CAUGHT")
        kind = self.rng.choice(("attribute", "key", "index", "stop"))
        if kind == "stop":  # the first next() yields the value, the second raises: keep the first
            first = self.fresh("first")
            setup, failing, recover = f"{box} = iter([VALUE])\n{first} = next({box})", f"next({box})", first
        else:
            setup, failing, recover = {
                "attribute": (f"{box} = VALUE", f"{box}.{self.fresh('missing_attribute')}", box),
                "key": (f"{box} = {{'value': VALUE}}", f"{box}['other']", f"{box}['value']"),
                "index": (f"{box} = [VALUE]", f"{box}[1]", f"{box}[-1]"),
            }[kind]
        caught = {"attribute": "AttributeError", "key": "KeyError", "index": "IndexError",
                  "stop": "StopIteration"}[kind]
        if kind in ("key", "index") and self.rng.random() < 0.5:
            caught = "LookupError"  # caught by the common base class
        return build(f"{setup}\ntry:\n    GOOD\nexcept {caught} as {err}:\n"
                     f"    {log}[type({err}).__name__] = True\n    BACK\n",
                     VALUE=site.value, GOOD=[site.with_code(failing)], BACK=[site.with_code(recover)])
