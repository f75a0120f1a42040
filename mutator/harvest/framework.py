"""The plain-Python stand-in for a test framework that every harvested test program carries.

A harvested unittest test keeps its own body: `self.assertEqual(...)` and friends then
resolve to `HarvestedChecks`, whose methods are plain asserts (tensors through
`torch.testing.assert_close`), so the program runs with plain `python` and without
unittest's machinery catching what fails. `HarvestedChecks.harvested_run` plays unittest's
part: class set-up, set-up, the test, tear-down. A test whose class derives from torch's
Dynamo `TestCase` gets `HarvestedDynamoChecks` instead, which puts that TestCase behind the
plain checks: its own set-up then runs around the test (the `torch._dynamo.config` it patches
for its tests, nested graph breaks), as the installed torch has it, not a copy of ours. The
source below is emitted into each program.
"""

from __future__ import annotations

import re

import libcst as cst

BASE_CLASS = "HarvestedChecks"
DYNAMO_BASE = "HarvestedDynamoChecks"  # HarvestedChecks for a test of torch's Dynamo TestCase
# where torch's Dynamo TestCase and the TestCases derived from it live: a base from these is one
DYNAMO_CASES = ("torch._dynamo.test_case.", "torch._inductor.test_case.")
RAISES = "harvested_raises"  # stands in for pytest.raises
STANDARD_TEST = "harvested_standard_test"  # stands in for torch._dynamo.testing.standard_test

CASE = '''
class HarvestedChecks(unittest.TestCase):
    """What the test's `self.assert...` calls reach: plain asserts; no test runner."""

    def setUp(self):
        torch._dynamo.reset()
        super().setUp()

    def tearDown(self):
        super().tearDown()

    @classmethod
    def setUpClass(cls):
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()

    @staticmethod
    def harvested_run(case_class, test_name, params):
        case_class.setUpClass()
        case = case_class()
        case.setUp()
        try:
            getattr(case, test_name)(**params)
        finally:
            case.tearDown()
            case_class.tearDownClass()

    def assertEqual(self, first, second, msg=None, **tolerances):
        harvested_same(first, second, msg, **tolerances)

    def assertNotEqual(self, first, second, msg=None, **tolerances):
        try:
            harvested_same(first, second, msg, **tolerances)
        except AssertionError:
            return
        raise AssertionError(msg or f"{first!r} == {second!r}")

    def assertTrue(self, value, msg=None):
        assert value, msg or f"{value!r} is not true"

    def assertFalse(self, value, msg=None):
        assert not value, msg or f"{value!r} is not false"

    def assertIs(self, first, second, msg=None):
        assert first is second, msg or f"{first!r} is not {second!r}"

    def assertIsNot(self, first, second, msg=None):
        assert first is not second, msg or f"{first!r} is {second!r}"

    def assertIsNone(self, value, msg=None):
        assert value is None, msg or f"{value!r} is not None"

    def assertIsNotNone(self, value, msg=None):
        assert value is not None, msg or "unexpectedly None"

    def assertIn(self, member, container, msg=None):
        assert member in container, msg or f"{member!r} not in {container!r}"

    def assertNotIn(self, member, container, msg=None):
        assert member not in container, msg or f"{member!r} in {container!r}"

    def assertIsInstance(self, value, cls, msg=None):
        assert isinstance(value, cls), msg or f"{value!r} is not a {cls!r}"

    def assertNotIsInstance(self, value, cls, msg=None):
        assert not isinstance(value, cls), msg or f"{value!r} is a {cls!r}"

    def assertGreater(self, first, second, msg=None):
        assert first > second, msg or f"{first!r} <= {second!r}"

    def assertGreaterEqual(self, first, second, msg=None):
        assert first >= second, msg or f"{first!r} < {second!r}"

    def assertLess(self, first, second, msg=None):
        assert first < second, msg or f"{first!r} >= {second!r}"

    def assertLessEqual(self, first, second, msg=None):
        assert first <= second, msg or f"{first!r} > {second!r}"

    def assertAlmostEqual(self, first, second, places=7, msg=None, delta=None):
        gap = abs(first - second)
        assert (gap <= delta) if delta is not None else round(gap, places) == 0, msg or f"{first!r} != {second!r}"

    def assertCountEqual(self, first, second, msg=None):
        assert sorted(map(repr, first)) == sorted(map(repr, second)), msg or f"{first!r} and {second!r} differ"

    assertSequenceEqual = assertListEqual = assertTupleEqual = assertDictEqual = assertSetEqual = assertEqual

    def assertRaises(self, expected, *args, **kwargs):
        return self.assertRaisesRegex(expected, None, *args, **kwargs)

    def assertRaisesRegex(self, expected, pattern, *args, **kwargs):
        if args:
            with harvested_raises(expected, match=pattern):
                args[0](*args[1:], **kwargs)
            return None
        return harvested_raises(expected, match=pattern)

    def assertWarns(self, expected, *args, **kwargs):
        if args:
            return args[0](*args[1:], **kwargs)
        return contextlib.nullcontext()

    assertWarnsRegex = assertWarns

    def assertExpectedInline(self, actual, expected, skip=0):
        normalise = lambda text: "\\n".join(line.rstrip() for line in str(text).strip().splitlines())
        assert normalise(actual) == normalise(expected), f"expected:\\n{expected}\\ngot:\\n{actual}"

    def assertNoUnraisable(self, callable, *args, **kwargs):
        raised = []
        hook, collecting = sys.unraisablehook, gc.isenabled()
        sys.unraisablehook = raised.append
        gc.disable()  # what a collection during the call finalises is not the call's
        try:
            callable(*args, **kwargs)
        finally:
            sys.unraisablehook = hook
            if collecting:
                gc.enable()
        assert not raised, f"unraisable exception: {raised[0].exc_value!r}"

    def subTest(self, msg=None, **params):
        return contextlib.nullcontext()

    def skipTest(self, reason):
        raise unittest.SkipTest(reason)

    def fail(self, msg=None):
        raise AssertionError(msg or "failed")
'''

DYNAMO_CASE = '''
class HarvestedDynamoChecks(HarvestedChecks, torch._dynamo.test_case.TestCase):
    """The plain checks under torch's Dynamo TestCase, whose own set-up runs around the test:
    the torch._dynamo.config it gives its tests, as the installed torch has it."""
'''

RAISES_SOURCE = '''
class harvested_raises:
    """`with harvested_raises(ValueError, match="bad"):` as pytest.raises and assertRaises do."""

    def __init__(self, expected, match=None):
        self.expected, self.match, self.exception = expected, match, None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None:
            raise AssertionError(f"{getattr(self.expected, '__name__', self.expected)} not raised")
        if not issubclass(kind, self.expected):
            return False
        if self.match is not None and not re.search(self.match, str(value)):
            raise AssertionError(f"{str(value)!r} does not match {self.match!r}")
        self.exception = self.value = value
        return True
'''

SAME_NAME = "harvested_same"
SAME = '''
def harvested_same(first, second, msg=None, **tolerances):
    """Equal as a test framework means it: tensors close, containers item by item."""
    tolerances = {k: v for k, v in tolerances.items() if k in ("atol", "rtol")}
    if isinstance(first, torch.Tensor) or isinstance(second, torch.Tensor):
        first, second = torch.as_tensor(first), torch.as_tensor(second)
        torch.testing.assert_close(first, second.to(first.dtype) if first.dtype != second.dtype else second,
                                   equal_nan=True, check_device=False, msg=msg, **tolerances)
    elif isinstance(first, (list, tuple)) and isinstance(second, (list, tuple)):
        assert len(first) == len(second), msg or f"lengths differ: {len(first)} != {len(second)}"
        for a, b in zip(first, second):
            harvested_same(a, b, msg, **tolerances)
    elif isinstance(first, dict) and isinstance(second, dict):
        assert first.keys() == second.keys(), msg or f"keys differ: {list(first)} != {list(second)}"
        for key in first:
            harvested_same(first[key], second[key], msg, **tolerances)
    elif isinstance(first, float) or isinstance(second, float):
        assert math.isclose(first, second, rel_tol=1.3e-6, abs_tol=1e-5), msg or f"{first!r} != {second!r}"
    else:
        assert first == second, msg or f"{first!r} != {second!r}"
'''

STANDARD = '''
def harvested_standard_test(self, fn, nargs, expected_ops=None, expected_ops_dynamic=None, expected_frame_count=1):
    """Compile `fn`, call it twice on each of two argument sets, compare with eager, count frames."""
    counter = torch._dynamo.testing.CompileCounter()
    first = [torch.randn(10, 10) for _ in range(nargs)]
    second = [torch.randn(10, 10) for _ in range(nargs)]
    expected = fn(*first), fn(*second)
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=counter, fullgraph=True)
    got = compiled(*first), compiled(*second), compiled(*first), compiled(*second)
    torch._dynamo.reset()
    for value, want in zip(got, expected * 2):
        harvested_same(value, want)
    self.assertEqual(counter.frame_count, expected_frame_count)
    if expected_ops is not None:
        self.assertEqual(counter.op_count, expected_ops)
'''


_ALWAYS = frozenset({"setUp", "tearDown", "setUpClass", "tearDownClass", "harvested_run"})
RUN = "harvested_run"
_USES = {"assertRaises": {"assertRaisesRegex"}, "assertSequenceEqual": {"assertEqual"},
         "assertListEqual": {"assertEqual"}, "assertTupleEqual": {"assertEqual"}, "assertDictEqual": {"assertEqual"},
         "assertSetEqual": {"assertEqual"}, "assertWarnsRegex": {"assertWarns"}}


def needed(code: str) -> list[str]:
    """The pieces a harvested test's code needs, each after what it uses; of HarvestedChecks,
    only the methods the test calls (`self.assertEqual`, ...)."""
    standard = STANDARD_TEST in code
    called = set(re.findall(r"\b(?:self|cls|super\(\))\.(\w+)", code)) | ({"assertEqual"} if standard else set())
    called |= {dep for name in list(called) for dep in _USES.get(name, ())}
    dynamo = DYNAMO_BASE in code
    pieces = [_case_with(called)] if BASE_CLASS in code or dynamo else []
    if dynamo:
        pieces.append(DYNAMO_CASE.strip())
    if RAISES in code or called & {"assertRaisesRegex"}:
        pieces.append(RAISES_SOURCE.strip())
    if SAME_NAME in code or standard or called & {"assertEqual", "assertNotEqual"}:
        pieces.append(SAME.strip())
    if standard:
        pieces.append(STANDARD.strip())
    return pieces


def _case_with(methods: set[str]) -> str:
    tree = cst.parse_module(CASE.strip())
    case = cst.ensure_type(tree.body[0], cst.ClassDef)
    body = cst.ensure_type(case.body, cst.IndentedBlock)
    keep = [item for item in body.body if _member_kept(item, methods | _ALWAYS)]
    return tree.with_changes(body=[case.with_changes(body=body.with_changes(body=keep))]).code.strip()


def _member_kept(item: cst.BaseStatement, methods: set[str]) -> bool:
    if isinstance(item, cst.FunctionDef):
        return item.name.value in methods
    if isinstance(item, cst.SimpleStatementLine) and isinstance(item.body[0], cst.Assign):
        return any(isinstance(t.target, cst.Name) and t.target.value in methods for t in item.body[0].targets)
    return True  # the docstring


IMPORTS = ("contextlib", "gc", "math", "re", "sys", "unittest", "torch", "torch._dynamo.testing",
           "torch._dynamo.test_case")


class Standalone(cst.CSTTransformer):
    """What needs a test framework, rewritten to plain Python: `pytest.raises(E, match=...)`
    -> `harvested_raises(E, match=...)`; torch's `standard_test(self, fn, nargs)` ->
    `harvested_standard_test(...)`, which compiles through torch.compile like the test's own code."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        func = updated.func
        if isinstance(func, cst.Attribute) and func.attr.value == "raises" and \
                isinstance(func.value, cst.Name) and func.value.value == "pytest":
            return updated.with_changes(func=cst.Name(RAISES))
        terminal = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) \
            else ""
        if terminal == "standard_test":
            return updated.with_changes(func=cst.Name(STANDARD_TEST))
        return updated
