"""Root-cause groups: findings whose reduced programs differ only where they fail are shown
together; findings whose programs differ elsewhere, or in what they compute, are not.
Pure: findings built as records, no runs."""

from __future__ import annotations

from mutator.findings.finding import Finding

from mutator.findings.signature import Signature
from mutator.findings.root_cause import canonical_lines, differ_at_one_point, groups
from mutator.report.issue import root_cause_lines

GRADS = '''\
import torch


def fn(w):
    return (w * 2).sum()


def inputs():
    return (torch.randn(3, requires_grad=True),)


def drive(f):
    w = torch.randn(3, requires_grad=True)
    loss = f(w)
    loss.backward()
    return w.grad.clone()
'''
GRADS_COMPARED = GRADS.replace("return w.grad.clone()", "return w.grad")
OTHER_FN = GRADS_COMPARED.replace("(w * 2).sum()", "w.tolist()")


def finding(kind: str, source: str, name: str, *, confirmed: bool = True) -> tuple[str, Finding]:
    signature = Signature(kind, "RuntimeError" if kind == "CRASH" else "", observation=name)
    return f"findings/{name}", Finding(signature, "r", f"findings/{name}",
                                       reduction=dict(confirmed=confirmed, source=source))


def differ(a: str, b: str) -> bool:
    return differ_at_one_point(canonical_lines(a), canonical_lines(b))


def test_a_crash_on_a_value_and_a_mismatch_of_it_differ_only_where_they_fail():
    assert differ(GRADS, GRADS_COMPARED) and differ(GRADS_COMPARED, GRADS)
    renamed = GRADS_COMPARED.replace("loss", "total").replace("randn(3", "randn(5")
    assert differ(GRADS, renamed)  # names and literals are the canonical form's business


def test_a_program_that_only_adds_the_failing_statement_at_the_end():
    extra = GRADS_COMPARED.replace("    return w.grad\n", "    print(w.grad)\n    w.grad.clone()\n")
    assert differ(GRADS_COMPARED.replace("    return w.grad\n", "    print(w.grad)\n"), extra)


def test_programs_that_differ_in_what_they_compile_are_other_bugs():
    assert not differ(GRADS_COMPARED, OTHER_FN)  # fn's only statement: nothing shared before it
    assert not differ(GRADS, OTHER_FN)  # two places


def test_a_difference_about_other_values_is_another_bug():
    assert not differ(GRADS, GRADS.replace("return w.grad.clone()", "return loss.item()"))


def test_a_difference_before_the_end_of_its_block_is_not_the_point_of_failure():
    assert not differ(GRADS, GRADS.replace("loss.backward()", "loss.backward(retain_graph=True)"))


def test_the_same_program_twice_is_no_group_and_tiny_programs_need_shared_context():
    assert not differ(GRADS, GRADS)
    one = "import torch\ndef fn(x):\n    return x.sin()\n"
    assert not differ(one, one.replace("x.sin()", "x.sin().clone()"))


def test_groups_are_connected_pieces_of_confirmed_reductions():
    crash = finding("CRASH", GRADS, "crash")
    mismatch = finding("MISMATCH", GRADS_COMPARED, "mismatch")
    printed = finding("MISMATCH", GRADS_COMPARED.replace("return w.grad", "return (w.grad, 1)"), "printed")
    unconfirmed = finding("MISMATCH", GRADS_COMPARED, "unconfirmed", confirmed=False)
    other = finding("MISMATCH", OTHER_FN, "other")
    unparsable = finding("CRASH", "def fn(:\n", "broken")
    [group] = groups([crash, mismatch, printed, unconfirmed, other, unparsable])
    assert group.name == "R1" and [m.key for m in group.members] == ["findings/crash", "findings/mismatch",
                                                                     "findings/printed"]
    line = root_cause_lines(group, "findings/crash")[0]
    assert line.startswith("Same root cause as: `findings/mismatch` (MISMATCH / mismatch); `findings/printed`")
    assert "findings/crash`" not in line and root_cause_lines(None, "x") == []


def test_the_same_signature_twice_is_a_merge_not_a_group():
    a = finding("CRASH", GRADS, "same")
    b = ("findings/same2", Finding(a[1].signature, "r", "findings/same2",
                                   reduction=dict(confirmed=True, source=GRADS_COMPARED)))
    assert groups([a, b]) == []
