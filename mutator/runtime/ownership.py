"""Which objects belong to the program, and which to torch or a library (docs/design.md, "What is compared").

A snapshot compares only state the program created. Objects owned by torch's compiler
stack or by library internals (Dynamo's `counters`, loggers, threads, locks, hook
handles, configs) change during compilation by design, or differ between any two runs,
even when a program global points at them. Two rules decide:

- by type: instances of classes defined in an infrastructure module (`INFRASTRUCTURE`);
  an instance of a *program* class derived from one keeps only its public attributes
  (the base class's private bookkeeping, like a Thread's `_ident`, is not the program's);
- by identity: objects that a library module holds as a global (Dynamo's `counters`,
  registries), remembered once per worker after warm-up and kept alive so that their
  ids stay theirs, plus what a program global derives from an imported name by
  subscripts and attributes alone (`frames = counters["frames"]`).
"""

from __future__ import annotations

import ast
import functools
import os
import sys
import sysconfig
import types
from typing import Any

INFRASTRUCTURE = (
    # torch's compiler stack and its helpers: their objects are the compiler's state
    "torch._dynamo", "torch._inductor", "torch._functorch", "torch._guards", "torch._logging",
    "torch._subclasses", "torch.fx", "torch._export", "torch.export", "torch.compiler",
    "torch._higher_order_ops", "torch.testing", "torch._C._dynamo", "torch.utils._sympy",
    "torch.utils.hooks", "torch.multiprocessing", "torch.distributed", "torch.profiler",
    "torch.autograd.profiler", "sympy",
    # the standard library's runtime machinery: loggers, threads, locks, files, tests
    "logging", "threading", "_thread", "multiprocessing", "concurrent", "asyncio", "unittest",
    "io", "_io", "socket", "selectors", "subprocess", "weakref", "_weakref", "tracemalloc",
    "inspect", "traceback", "contextvars", "_contextvars", "tempfile", "warnings", "pytest", "_pytest",
)
_NOT_STATE = (types.ModuleType, type, str, bytes, int, float, complex, bool, tuple, frozenset, type(None))

# where installed code lives: the standard library, site-packages, the environment's prefixes
_INSTALLED = tuple(sorted({os.path.join(os.path.abspath(path), "") for path in (
    *(sysconfig.get_paths().get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")),
    sys.prefix, sys.base_prefix, sys.exec_prefix) if path}))

_library_objects: list[Any] | None = None  # kept alive: their ids cannot be reused by program objects
_library_ids: dict[int, str] = {}  # id -> the module that holds the object


def remember_library_objects(program_modules: tuple[str, ...] = ()) -> None:
    """Record the mutable objects that loaded library modules hold as globals.

    The worker calls this after warm-up, so forked children inherit the table; in-process
    callers get it built on first use.
    """
    global _library_objects, _library_ids
    kept: list[Any] = []
    owners: dict[int, str] = {}
    for name, module in list(sys.modules.items()):
        if name in program_modules or not isinstance(module, types.ModuleType):
            continue
        try:
            values = list(vars(module).values())
        except TypeError:
            continue
        for value in values:
            if _is_mutable_object(value) and id(value) not in owners:
                kept.append(value)
                owners[id(value)] = name
    _library_objects, _library_ids = kept, owners


def library_owner(value: Any) -> str | None:
    """The library module `value` belongs to, or None when it is the program's."""
    if _library_objects is None:
        remember_library_objects(("__main__", "__mutator__"))
    owner = _library_ids.get(id(value))
    if owner is not None:
        return owner
    cls = type(value)
    return cls.__module__ if is_infrastructure(cls) else None


def library_owned(value: Any) -> bool:
    """Whether `value` is torch's or a library's, not the program's."""
    return library_owner(value) is not None


def is_infrastructure(cls: type) -> bool:
    return _infrastructure_module(getattr(cls, "__module__", None) or "")


@functools.lru_cache(maxsize=4096)
def _infrastructure_module(module: str) -> bool:
    return any(module == prefix or module.startswith(prefix + ".") for prefix in INFRASTRUCTURE)


def program_defined(cls_or_function: Any) -> bool:
    """A class or function the program defined: its module's file lies outside Python's
    installation (the standard library, installed packages) and is not torch's, as a source
    build's is."""
    module_name = getattr(cls_or_function, "__module__", None) or ""
    if module_name == "torch" or module_name.startswith("torch."):
        return False
    file = getattr(sys.modules.get(module_name), "__file__", None)
    return isinstance(file, str) and not os.path.abspath(file).startswith(_INSTALLED)


def derives_from_infrastructure(cls: type) -> bool:
    """A program class with an infrastructure base (a Thread or TestCase subclass)."""
    return any(is_infrastructure(base) for base in cls.__mro__[1:])


def library_bound_names(source: str) -> frozenset[str]:
    """Module-level names bound to a library's objects by the program's own statements.

    Names a `from X import Y` binds, and names assigned from an imported name through
    subscripts and attributes only (`frames = counters["frames"]`, `log = utils.log`):
    calls make new objects, which are the program's (`x = torch.ones(3)`).
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    imported: set[str] = set()
    derived: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            imported.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Import):
            imported.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Assign) and _rooted_in(node.value, imported | derived):
            derived.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(imported | derived)


def _rooted_in(node: ast.expr, names: set[str]) -> bool:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return isinstance(node, ast.Name) and node.id in names


def _is_mutable_object(value: Any) -> bool:
    """State a library keeps: containers and plain objects; callables and constants are not."""
    return not isinstance(value, _NOT_STATE) and not callable(value)
