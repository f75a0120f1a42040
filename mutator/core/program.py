"""Programs: one Python source file in harness form or script form (docs/design.md, "Programs").

This module only parses; it never imports torch, so the parent process can load and
validate a whole corpus cheaply.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from mutator.core import parsing

FORMAT_HELP = "see seeds/README.md"


class ProgramForm(Enum):
    HARNESS = "harness"  # defines fn and inputs(), optionally drive(f) and state()
    SCRIPT = "script"  # calls torch.compile itself


class ProgramError(ValueError):
    """A file that cannot be a program; the message names the file and what to do."""


@dataclass(frozen=True, slots=True)
class Program:
    """A program's source text, its form, and the name it is shown (and traced) under."""

    source: str
    form: ProgramForm
    name: str

    @classmethod
    def from_source(cls, source: str, name: str) -> Program:
        """Validate `source` and detect its form (or take the one its header declares); raises
        ProgramError naming `name`."""
        tree = parse_source(source, name)
        form = ProgramForm.SCRIPT if declares_script(source) else _detect_form(tree, name)
        return cls(source=source, form=form, name=name)

    @property
    def digest(self) -> str:
        """A short content hash: equal sources are the same program."""
        return hashlib.sha1(self.source.encode()).hexdigest()[:12]


SCRIPT_DECLARATION = "# mutator-form: script"  # a header line: runs as a script, whatever its text names


def declares_script(source: str) -> bool:
    """Whether one of the first comment lines declares script form: a harvested test that
    compiles through code its text does not name (another module's decorator or helper)."""
    for line in source.splitlines()[:8]:
        if not line.startswith("#"):
            return False
        if line.startswith(SCRIPT_DECLARATION):
            return True
    return False


def parse_source(source: str, name: str) -> ast.Module:
    """The syntax tree of `source`, or a one-line ProgramError naming `name` and the line."""
    try:
        return parsing.parse(source, filename=name)
    except SyntaxError as exc:
        where = f"{name}:{exc.lineno}" if exc.lineno else name
        raise ProgramError(f"{where}: does not parse ({exc.msg}); fix the syntax") from None


def load_program(path: str | Path) -> Program:
    """Read one program file; raises ProgramError with a one-line message."""
    return Program.from_source(read_source(path), str(path))


def read_source(path: str | Path) -> str:
    """A Python file's text; raises ProgramError when it is unreadable, not UTF-8, or binary."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ProgramError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProgramError(
            f"{path}: not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}); "
            "save it as UTF-8 Python source"
        ) from None
    if "\x00" in source:
        raise ProgramError(f"{path}: contains NUL bytes, so it is not Python source")
    return source


def discover(paths: list[str | Path]) -> list[Path]:
    """Expand files and directories into program files, in a stable order.

    Directories are searched recursively for `*.py`, skipping hidden and cache
    directories, `__init__.py`, and the findings a campaign or a harvest filed beside its
    programs (`findings/<signature>/finding.json`); a file named explicitly is always taken.
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            filed = {f.parent for f in path.rglob("finding.json") if f.parent != path}
            found.extend(
                p
                for p in sorted(path.rglob("*.py"))
                if p.name != "__init__.py"
                and not any(part.startswith((".", "__pycache__")) for part in p.relative_to(path).parts)
                and not filed.intersection(p.parents)
            )
        else:
            found.append(path)
    return found


def load_programs(paths: list[str | Path]) -> tuple[list[Program], list[ProgramError]]:
    """Load every program under `paths`; bad files become errors, the rest still load."""
    programs: list[Program] = []
    errors: list[ProgramError] = []
    for path in discover(paths):
        try:
            programs.append(load_program(path))
        except ProgramError as exc:
            errors.append(exc)
    return programs, errors


def terminal_name(node: ast.expr) -> str:
    """The last name of a dotted reference: `compile` for `torch.compile`, `fn` for `fn`."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _detect_form(tree: ast.Module, name: str) -> ProgramForm:
    if _compiles_at_module_level(tree):  # a script that compiles itself, whatever else it defines
        return ProgramForm.SCRIPT
    top = _top_level_names(tree)
    if "fn" in top and "inputs" in top:
        return ProgramForm.HARNESS
    if any(_mentions_compile(node) or _imports_compile(node) for node in ast.walk(tree)):
        return ProgramForm.SCRIPT
    if "fn" in top:
        raise ProgramError(f"{name}: defines fn but no inputs(); add `def inputs(): return (...)`, {FORMAT_HELP}")
    raise ProgramError(
        f"{name}: defines neither fn with inputs() (harness form) nor a torch.compile call "
        f"(script form); {FORMAT_HELP}"
    )


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _compiles_at_module_level(tree: ast.Module) -> bool:
    """Whether running the module compiles something: at top level (decorators, `__main__`
    blocks and class bodies included), in a module-level function the module calls
    (transitively), or in a TestCase's methods when the module runs `unittest.main()`."""
    functions = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    aliases = {alias.asname or alias.name for node in ast.walk(tree) if _imports_compile(node)
               for alias in node.names if _compiles_by_name(node, alias.name)}
    pending = [_executed_nodes(tree.body)]
    seen: set[str] = set()
    while pending:
        nodes = pending.pop()
        if any(_mentions_compile(node) or isinstance(node, ast.Name) and node.id in aliases for node in nodes):
            return True
        for node in nodes:
            callee = node.func if isinstance(node, ast.Call) else None
            if isinstance(callee, ast.Name) and callee.id in functions and callee.id not in seen:
                seen.add(callee.id)
                pending.append(_executed_nodes(functions[callee.id].body))
            elif callee is not None and _runs_tests(callee):
                pending.extend(_executed_nodes(method.body) for method in _test_methods(tree))
    return False


def _executed_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    """Every node that runs when `body` runs: nested function bodies and lambdas do not,
    their decorators and defaults do."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        found.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend(node.decorator_list)
            stack.extend(d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None)
        elif isinstance(node, ast.Lambda):
            stack.extend(d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None)
        else:
            stack.extend(ast.iter_child_nodes(node))
    return found


def _runs_tests(callee: ast.expr) -> bool:
    """`unittest.main()`, `main()` imported from unittest, or a `run_tests()` helper."""
    terminal = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
    if terminal == "run_tests":
        return True
    return terminal == "main" and isinstance(callee, ast.Attribute) and getattr(callee.value, "id", "") == "unittest"


def _test_methods(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [
        item
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        for item in node.body
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


# torch's test helpers that compile the function or test they are given (optimize_assert underneath)
_COMPILING_HELPERS = frozenset({"make_dynamo_test", "standard_test", "optimize_assert"})
_HELPER_MODULES = ("torch._dynamo", "torch.testing._internal")


def _mentions_compile(node: ast.AST) -> bool:
    """torch.compile, torch._dynamo.optimize(_assert), or one of torch's compiling test helpers
    named through its module (`torch._dynamo.testing.standard_test`)."""
    if not isinstance(node, ast.Attribute):
        return False
    if node.attr == "compile" and isinstance(node.value, ast.Name) and node.value.id == "torch":
        return True
    if node.attr in ("optimize", "optimize_assert") and _is_dynamo(node.value):
        return True
    return node.attr in _COMPILING_HELPERS and isinstance(node.value, ast.Attribute) \
        and node.value.attr in ("testing", "common_utils")


def _imports_compile(node: ast.AST) -> bool:
    return isinstance(node, ast.ImportFrom) and any(_compiles_by_name(node, alias.name) for alias in node.names)


def _compiles_by_name(node: ast.ImportFrom, name: str) -> bool:
    """`from torch import compile`, or a compiling helper imported from torch's dynamo or test modules."""
    module = node.module or ""
    if module == "torch":
        return name == "compile"
    return name in _COMPILING_HELPERS and module.startswith(_HELPER_MODULES)


def _is_dynamo(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "_dynamo"
    return isinstance(node, ast.Name) and node.id in {"dynamo", "_dynamo", "torchdynamo"}
