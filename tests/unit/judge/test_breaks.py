import textwrap

from mutator.judge.breaks import BreakRegions
from mutator.core.values import FrameInfo

SOURCE = textwrap.dedent("""
    import torch
    from torch._dynamo import error_on_graph_break as strictly

    @torch._dynamo.disable
    def skipped(x):
        return x

    def body(x):
        with torch._dynamo.error_on_graph_break(True):
            y = x + 1
            with strictly(False):
                y = y * 2
            return y

    @torch._dynamo.error_on_graph_break(False)
    def lenient(x):
        with torch._dynamo.error_on_graph_break(error_on_graph_break=True):
            x = x + 1
        return x
""").lstrip()


def regions():
    return BreakRegions("p.py", SOURCE)


def allows(line):
    region = regions().setting_at(line)
    return None if region is None else region.allows_breaks


def test_settings_by_line_innermost_wins():
    assert allows(10) is False  # inside error_on_graph_break(True)
    assert allows(12) is True  # inside the aliased nested (False)
    assert allows(8) is None  # body's own line, outside any block
    assert allows(6) is True  # a disabled function is never traced
    assert allows(18) is False and allows(19) is True  # a block inside a decorated function, then the decorator


def test_mode_follows_the_stack_outermost_first():
    stack = (FrameInfo("p.py", 12, "body"), FrameInfo("p.py", 6, "skipped"))
    mode = regions().mode(fullgraph=False, at_call=False, user_stack=stack, dynamo_says=True)
    assert not mode.errors and mode.allowed_again and "p.py:4" in mode.why


def test_a_setting_carries_into_callees_that_say_nothing():
    stack = (FrameInfo("p.py", 10, "body"), FrameInfo("other.py", 3, "helper"))
    assert regions().mode(fullgraph=False, at_call=False, user_stack=stack, dynamo_says=None).errors


def test_fullgraph_and_the_setting_at_the_call():
    assert regions().mode(fullgraph=True, at_call=False, user_stack=(), dynamo_says=False).why == "fullgraph=True"
    at_call = regions().mode(fullgraph=False, at_call=True, user_stack=(), dynamo_says=None)
    assert at_call.errors and "around the compiled call" in at_call.why
    assert not regions().mode(fullgraph=False, at_call=False, user_stack=(), dynamo_says=None).errors


def test_unparsable_source_has_no_settings():
    assert BreakRegions("p.py", "def (:").setting_at(1) is None
