"""The program that collects one test module by importing it, as pytest does; a sandboxed
worker runs it (`harvest.collection` puts the path in front of this module's source).

What the module does at import time is then seen: members copied onto a class with
`setattr`, `instantiate_parametrized_tests`, `instantiate_device_type_tests`, generated
classes. The module is imported the way pytest's default import mode imports it: in a
folder with an `__init__.py`, as its package's module, the first folder up without one on
`sys.path` (each package imported from its own `__init__.py`: the sandbox does not let the
run list the folder above the test folder); otherwise as a module of a package made of the
folder alone (so that `from ._common import x` works), with the folder and its parent on
`sys.path` (so that `from _common import x` does too). Its tests are what pytest collects of it: of every
`unittest.TestCase` its namespace holds, what unittest's loader names (`getTestCaseNames`);
of the rest, pytest's rules for `test*` functions and `Test*` classes. For each test the
program reports where its code lives, read from the code object behind the attribute
(through `functools.wraps`, partials and the wrappers of parametrising helpers), the
parameters those wrappers bind (as source text), how unittest and pytest marks skip it,
and, for every class of the folder along its class's MRO, the members the class holds
and which of them were copied from another class of the folder.

The last line of stdout is the answer: `MARKER` and a JSON object. Standard library only:
this file is a program's text, not a module the worker imports.
"""

import builtins
import functools
import importlib
import importlib.machinery
import importlib.util
import inspect
import json
import linecache
import os
import sys
import traceback
import unittest

MARKER = "mutator-collection: "
_MODULE_SKIPS = ("SkipTest", "Skipped")  # unittest.SkipTest, pytest.skip(allow_module_level=True)


def main(path):
    # the runtime filed this program's text under the test file's name (the program is named
    # after it, so that the sandbox lets it read the folder); the module's own is on disk
    linecache.cache.pop(path, None)
    print(MARKER + json.dumps(collect(os.path.realpath(path))))


def collect(path):
    folder = os.path.dirname(path)
    try:
        module = import_test_module(path)
    except BaseException as exc:  # whatever importing it raises is the module's collection error
        if type(exc).__name__ in _MODULE_SKIPS:
            return {"skipped": str(exc)}
        return {"error": _describe(exc, folder)}
    return _Namespace(module, folder).collected()


def import_test_module(path):
    folder, stem = os.path.dirname(path), os.path.splitext(os.path.basename(path))[0]
    if os.path.isfile(os.path.join(folder, "__init__.py")):
        base, parts = folder, [stem]
        while os.path.isfile(os.path.join(base, "__init__.py")):
            parts.insert(0, os.path.basename(base))
            base = os.path.dirname(base)
        sys.path[:0] = [base, folder]
        _import_packages(base, parts[:-1])
        return importlib.import_module(".".join(parts))
    package = os.path.basename(folder)
    free = _free(package, folder)
    sys.path[:0] = [folder, os.path.dirname(folder)]
    if not free:
        return importlib.import_module(stem)
    # the folder as a package of its own, made here rather than found on sys.path: finding it
    # would list the parent folder, which the sandbox does not let a run read
    spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
    spec.submodule_search_locations = [folder]
    sys.modules[package] = importlib.util.module_from_spec(spec)
    return importlib.import_module(f"{package}.{stem}")


def _import_packages(base, names):
    """The packages above the module, each imported from its own `__init__.py` (outermost
    first): finding them through `sys.path` would list `base`, which the sandbox does not let
    a run read when it is outside the test folder."""
    for depth in range(1, len(names) + 1):
        name = ".".join(names[:depth])
        if name in sys.modules:
            continue
        folder = os.path.join(base, *names[:depth])
        spec = importlib.util.spec_from_file_location(name, os.path.join(folder, "__init__.py"),
                                                      submodule_search_locations=[folder])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        if depth > 1:
            setattr(sys.modules[".".join(names[:depth - 1])], names[depth - 1], module)


def _free(package, folder):
    """Whether the folder's name can be a package of the folder alone: no module of that name
    is imported or importable, but for the folder itself as a namespace package."""
    if not package.isidentifier() or package in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return False
    return spec is None or spec.origin is None and [os.path.realpath(p) for p in
                                                     spec.submodule_search_locations or ()] == [folder]


class _Namespace:
    """The tests of an imported module's namespace, and the folder's classes along their MROs."""

    def __init__(self, module, folder):
        self.module, self.folder = module, folder
        self.classes = {}

    def collected(self):
        tests = []
        for name, obj in list(vars(self.module).items()):
            try:
                tests.extend(self._tests(name, obj))
            except Exception as exc:  # a namespace entry our reading does not expect costs that entry
                tests.append({"id": name, "broken": _describe(exc, self.folder)})
        return {"module": self.module.__name__, "tests": tests, "classes": list(self.classes.values())}

    def _tests(self, name, obj):
        if isinstance(obj, type) and issubclass(obj, unittest.TestCase):
            if getattr(obj, "__test__", True) and not inspect.isabstract(obj):
                names = unittest.TestLoader().getTestCaseNames(obj)
                for attr in names or (["runTest"] if callable(getattr(obj, "runTest", None)) else []):
                    yield self._method(name, obj, attr)
        elif isinstance(obj, type) and name.startswith("Test"):
            if getattr(obj, "__test__", True) and not inspect.isabstract(obj) and not _constructed(obj):
                for attr in _pytest_methods(obj):
                    yield self._method(name, obj, attr)
        elif name.startswith("test") and getattr(obj, "__test__", True) and \
                inspect.isfunction(_innermost(obj, self.folder)[0]):
            yield self._test(name, name, obj, {"class": "", "mro": [], "device": None}, method=False)

    def _method(self, name, cls, attr):
        mro = [klass for klass in cls.__mro__ if _in_folder(klass, self.folder)]
        for klass in mro:
            if id(klass) not in self.classes:
                self.classes[id(klass)] = self._class(klass)
        record = {"class": name, "mro": [_site(c) for c in mro], "device": getattr(cls, "device_type", None)}
        test = self._test(f"{name}::{attr}", attr, inspect.getattr_static(cls, attr), record, method=True)
        if getattr(cls, "__unittest_skip__", False) and not test["skip"]:
            test["skip"] = getattr(cls, "__unittest_skip_why__", "") or "skipped"
        return test

    def _test(self, test_id, attr, raw, record, *, method):
        function, params = _innermost(raw, self.folder)
        code = getattr(function, "__code__", None)
        skip, xfail = _marks(raw, self.folder)
        record = dict(record, id=test_id, attribute=attr, skip=skip, xfail=xfail,
                      marks_parametrize=_parametrized(raw, self.folder))
        record["function"] = None if code is None else {
            "file": os.path.realpath(code.co_filename), "line": code.co_firstlineno, "name": code.co_name,
            "qualname": getattr(function, "__qualname__", code.co_name)}
        record["params"], record["why"] = self._written(params, function, method)
        return record

    def _written(self, params, function, method):
        """The parameters as source text, read in the test's module; None, and why, when one
        cannot be written or the parametrisation leaves a parameter without a value."""
        try:
            listed = list(inspect.signature(function, follow_wrapped=False).parameters.values())
        except (TypeError, ValueError):
            return {}, ""
        required = [p.name for p in listed[1 if method else 0:]
                    if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        missing = [name for name in required if name not in params and name != "device"]
        if params and missing:
            return None, f"its parametrisation leaves {', '.join(missing)} without a value"
        written = {}
        for name, value in params.items():
            text = _source(value, vars(self.module))
            if text is None:
                return None, f"its parameter {name} is {_short(repr(value), 80)}, which has no source to write"
            written[name] = text
        return written, ""

    def _class(self, cls):
        """A class of the folder: the members it holds now, and those of them copied from
        another class of the folder (a function whose qualified name names that class)."""
        copied = []
        for value in vars(cls).values():
            function, _ = _innermost(value, self.folder)
            owner, _, method = getattr(function, "__qualname__", "").rpartition(".")
            code = getattr(function, "__code__", None)
            if code is None or not owner or owner == cls.__qualname__ or "<" in owner or "." in owner:
                continue
            source = os.path.realpath(code.co_filename)
            if os.path.dirname(source) == self.folder:
                copied.append({"name": method, "file": source, "qualname": owner})
        return dict(_site(cls), members=[n for n in vars(cls) if not n.startswith("__")], copied=copied)


def _innermost(obj, folder):
    """The function whose code a test runs, and the keyword arguments its wrappers bind:
    a partial's keywords, or a dict a wrapper holds as a default or in its closure (torch's
    `param_kwargs`) whose keys are parameters of the function it wraps."""
    layers = list(_layers(obj, folder))
    function = layers[-1] if layers else obj
    bound = []
    for layer in layers[:-1]:
        if isinstance(layer, (functools.partial, functools.partialmethod)):
            bound.append(dict(layer.keywords))
        elif inspect.isfunction(layer):
            bound.extend(_held_dicts(layer))
    names = set(_parameters(function))
    params = {}
    for candidate in bound:
        if candidate and set(candidate) <= names:
            params.update({k: v for k, v in candidate.items() if k not in params})
    return function, params


def _held_dicts(function):
    held = [*(function.__defaults__ or ()), *(function.__kwdefaults__ or {}).values(), *_cells(function)]
    return [value for value in held if isinstance(value, dict) and all(isinstance(k, str) for k in value)]


def _parameters(function):
    try:
        return list(inspect.signature(function, follow_wrapped=False).parameters)
    except (TypeError, ValueError):
        return []


def _source(value, namespace):
    """Text that evaluates to `value` in the test's module (a literal, `torch.float32`, a name)."""
    text = repr(value)
    try:
        back = eval(text, dict(namespace))  # noqa: S307 - a repr in the sandboxed child, to check it reads back
    except Exception:
        back = _MISSING
    if back is value or type(back) is type(value) and _equal(back, value):
        return text
    name = getattr(value, "__name__", None)
    if not isinstance(name, str):
        return None
    if namespace.get(name, getattr(builtins, name, _MISSING)) is value:
        return name
    dotted = f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', name)}"
    try:
        return dotted if eval(dotted, dict(namespace)) is value else None  # noqa: S307 - as above
    except Exception:
        return None


def _equal(one, other):
    try:
        return bool(one == other)
    except Exception:
        return False


_MISSING = object()


def _marks(obj, folder):
    """How unittest's decorators and pytest's marks skip the test: (reason or "", expected to fail)."""
    skip, xfail = "", False
    for layer in _layers(obj, folder):
        if getattr(layer, "__unittest_skip__", False) and not skip:
            skip = getattr(layer, "__unittest_skip_why__", "") or "skipped"
        xfail = xfail or bool(getattr(layer, "__unittest_expecting_failure__", False))
        for mark in getattr(layer, "pytestmark", None) or ():
            kind = getattr(mark, "name", "")
            conditions = getattr(mark, "args", ())
            if kind == "skip" or kind == "skipif" and conditions and all(c is True for c in conditions):
                skip = skip or str(getattr(mark, "kwargs", {}).get("reason") or (conditions[0] if kind == "skip"
                                                                                 and conditions else kind))
            xfail = xfail or kind == "xfail" and all(c is True for c in conditions)
    return skip, xfail


def _parametrized(obj, folder):
    return any(getattr(mark, "name", "") == "parametrize" for layer in _layers(obj, folder)
               for mark in getattr(layer, "pytestmark", None) or ())


def _layers(obj, folder):
    """The test's attribute and what it wraps, outermost first (where decorators leave marks
    and bind parameters): through `functools.wraps`, partials, and a wrapper of a library's
    that holds one function in its closure without saying it wraps it."""
    seen = set()
    while obj is not None and id(obj) not in seen:
        seen.add(id(obj))
        yield obj
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        elif isinstance(obj, (functools.partial, functools.partialmethod)):
            obj = obj.func
        elif hasattr(obj, "__wrapped__") or not inspect.isfunction(obj) or _in_folder_code(obj, folder):
            obj = getattr(obj, "__wrapped__", None)
        else:
            held = [value for value in _cells(obj) if inspect.isfunction(value)]
            obj = held[0] if len(held) == 1 else None


def _cells(function):
    for cell in function.__closure__ or ():
        try:
            yield cell.cell_contents
        except ValueError:  # an empty cell
            continue


def _in_folder_code(function, folder):
    return os.path.dirname(os.path.realpath(function.__code__.co_filename)) == folder


def _constructed(cls):
    """A plain class with its own `__init__` or `__new__`: pytest warns and collects none of it."""
    return cls.__init__ is not object.__init__ or cls.__new__ is not object.__new__


def _pytest_methods(cls):
    """`test*` methods of a plain class in pytest's order: base classes first, each in definition order."""
    seen, per_class = set(), []
    for klass in cls.__mro__:
        found = []
        for name, value in vars(klass).items():
            if name not in seen and name.startswith("test") and callable(getattr(cls, name, None)):
                found.append(name)
            seen.add(name)
        per_class.append(found)
    return [name for found in reversed(per_class) for name in found]


def _site(cls):
    module = sys.modules.get(cls.__module__)
    return {"file": os.path.realpath(getattr(module, "__file__", None) or ""), "qualname": cls.__qualname__}


def _in_folder(cls, folder):
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    return bool(path) and os.path.dirname(os.path.realpath(path)) == folder


def _describe(exc, folder):
    """`Type: message (file.py:line)`, the line the innermost frame of the folder's files."""
    where = ""
    for frame, line in traceback.walk_tb(exc.__traceback__):
        code = frame.f_code
        # this program runs under the test file's name: its own frames are not the module's
        if frame.f_globals is not globals() and os.path.dirname(os.path.realpath(code.co_filename)) == folder:
            where = f" ({os.path.basename(code.co_filename)}:{line})"
    return f"{type(exc).__name__}: {_short(str(exc))}{where}"


def _short(text, limit=240):
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 3] + "..."
