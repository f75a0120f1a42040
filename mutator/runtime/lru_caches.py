"""Dynamo and `functools.lru_cache`: what a compiled run notes, what a confirming eager run emulates.

Dynamo does not keep an lru_cache: where the code it traces calls a function wrapped by
`functools.lru_cache` (or `functools.cache`, built on it), it traces the wrapped function
itself and says so once through `torch._dynamo.utils.warn_once` ("Dynamo detected a call to
a `functools.lru_cache`-wrapped function at 'prog.py:14'. Dynamo ignores the cache wrapper
and directly traces the wrapped function. ..."). The compiled program then runs the body
where eager hit the cache, and the cache's statistics never see those calls.

A compiled run notes where Dynamo did so (`noting_traced_through`: `CallRecord.lru_cache_traced`).
A confirmation's eager run with `RunConfig.lru_cache_calls_through` treats the program's
own cached functions the way Dynamo does (`calling_through`): called inside a recorded
call, they run their body and leave the cache and its statistics alone; called anywhere
else, they are the cache. The judge compares the compiled run with that run too
(`mutator.judge.lru_cache`).
"""

from __future__ import annotations

import contextlib
import functools
import re
import types
from collections.abc import Callable, Iterator
from typing import Any

import torch._dynamo.utils

WARNING = "`functools.lru_cache`-wrapped function"  # what Dynamo's warning says, on every release it has it
_SITE = re.compile(r"function at '([^']+)'")


@contextlib.contextmanager
def noting_traced_through(note: Callable[[str], None]) -> Iterator[None]:
    """Call `note` with the place ("prog.py:14") each time Dynamo traces through an lru_cache
    wrapper, whether or not its warning still goes out (it goes out once per place)."""
    utils = torch._dynamo.utils
    real = utils.warn_once

    def warn_once(msg: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(msg, str) and WARNING in msg:
            site = _SITE.search(msg)
            note(site.group(1) if site else "?")
        return real(msg, *args, **kwargs)

    utils.warn_once = warn_once
    try:
        yield
    finally:
        utils.warn_once = real


@contextlib.contextmanager
def calling_through(program_file: str, inside_a_call: Callable[[], bool]) -> Iterator[None]:
    """`functools.lru_cache` (and `functools.cache`) making, of a function the program defines,
    a cache that `inside_a_call()` calls through, as Dynamo does; other functions get the real one."""
    real = functools.lru_cache

    def own(cached: Any) -> Any:
        code = getattr(getattr(cached, "__wrapped__", None), "__code__", None)
        return _lru_cache_wrapper(cached, inside_a_call) if code is not None and code.co_filename == program_file \
            else cached

    def lru_cache(maxsize: Any = 128, typed: bool = False) -> Any:
        made = real(maxsize, typed)
        if isinstance(made, functools._lru_cache_wrapper):  # @lru_cache, without arguments
            return own(made)
        return lambda user_function: own(made(user_function))

    functools.lru_cache = lru_cache  # type: ignore[assignment]  # functools.cache looks it up here too
    try:
        yield
    finally:
        functools.lru_cache = real


class _lru_cache_wrapper:  # noqa: N801 - functools' own name: a global holding one is snapshot as it would be
    """An lru_cache wrapper that, inside a recorded call, calls the function it wraps instead.

    Its instance dictionary is the real wrapper's (`__wrapped__`, `__name__`, ...,
    `cache_parameters`); what it keeps of its own has dunder names, which snapshots skip.
    """

    def __init__(self, cached: Any, inside_a_call: Callable[[], bool]) -> None:
        self.__dict__.update(vars(cached))
        self.__dict__["__real_cache__"], self.__dict__["__inside_a_call__"] = cached, inside_a_call

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        d = self.__dict__
        return d["__wrapped__"](*args, **kwargs) if d["__inside_a_call__"]() else d["__real_cache__"](*args, **kwargs)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """A cached method binds like the real wrapper does."""
        return self if obj is None else types.MethodType(self, obj)

    def cache_info(self) -> Any:
        return self.__dict__["__real_cache__"].cache_info()

    def cache_clear(self) -> None:
        self.__dict__["__real_cache__"].cache_clear()
