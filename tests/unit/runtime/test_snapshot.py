"""Snapshots (runtime.snapshot): state signatures (what Dynamo's guards read of a tensor, of a
program's classes and functions and of a weak reference) and what a value is kept as."""

import fractions
import gc
import weakref

import torch

from mutator.core.values import OpaqueValue
from mutator.runtime.ownership import program_defined
from mutator.runtime.snapshot import signature_of, snapshot


def test_a_tensor_attribute_is_part_of_the_state_signature():
    plain, tagged, other, same = torch.ones(3), torch.ones(3), torch.ones(3), torch.ones(3)
    tagged.tag, other.tag, same.tag = 1, 2, 1
    signatures = {name: signature_of(((t,), {})) for name, t in
                  (("plain", plain), ("tagged", tagged), ("other", other), ("same", same))}
    assert signatures["plain"][0] != signatures["tagged"][0]  # hasattr(x, 'tag') is guarded
    assert signatures["tagged"][0] != signatures["other"][0]  # and the value read
    assert signatures["tagged"] == signatures["same"]


def test_tensor_values_in_attributes_are_metadata_only_like_guards():
    a, b = torch.ones(3), torch.ones(3)
    a.scale, b.scale = torch.ones(1), torch.full((1,), 5.0)
    assert signature_of(a)[0] == signature_of(b)[0]
    b.scale = torch.ones(2)
    assert signature_of(a)[0] != signature_of(b)[0]


def test_dynamic_marks_still_count_and_an_attribute_naming_its_own_tensor_is_taken_once():
    a, b = torch.ones(3), torch.ones(3)
    torch._dynamo.mark_dynamic(b, 0)
    assert signature_of(a)[0] != signature_of(b)[0]
    plain = signature_of(a)
    a.me = a
    assert signature_of(a) != plain


def test_a_grad_fn_is_kept_as_an_autograd_node_whatever_made_it():
    x = torch.ones(2, requires_grad=True)
    by_eager = (x + 1).grad_fn
    by_aot = torch.compile(lambda t: t + 1, backend="aot_eager")(x).grad_fn
    assert type(by_eager).__name__ == "AddBackward0" and type(by_aot).__name__ == "CompiledFunctionBackward"
    kept = [snapshot(node) for node in (by_eager, by_aot)]
    assert all(isinstance(k, OpaqueValue) and (k.kind, k.text) == ("autograd node", "") for k in kept)
    assert snapshot(x.grad_fn) is None


def test_what_a_programs_class_holds_is_part_of_the_state_of_its_instances():
    class Base:
        gain = 2.0

    class Child(Base):
        gain = 5.0

        def scale(self):
            return 1

    child = Child()
    first = signature_of(((child,), {}))
    del Child.gain  # y.gain now resolves to Base's: Dynamo guards type(y).__dict__
    deleted = signature_of(((child,), {}))
    Child.gain = 5.0
    assert first != deleted and signature_of(((child,), {})) == first
    Child.scale = lambda self: 2  # a method is a class attribute too
    assert signature_of(((child,), {}))[0] != first[0]
    assert signature_of(((Child,), {}))[0] != signature_of(((Base,), {}))[0]  # a class passed as itself


def test_only_the_programs_classes_are_read_not_installed_ones():
    class Local:
        pass

    assert program_defined(Local)
    assert not program_defined(torch.nn.Linear) and not program_defined(fractions.Fraction) and not program_defined(int)


def test_a_weak_reference_is_its_referent_or_dead():
    held, same = torch.ones(3), torch.ones(3)
    ref, same_ref = weakref.ref(held), weakref.ref(same)
    alive = signature_of(((ref,), {}))
    assert alive == signature_of(((same_ref,), {}))  # a referent as guards see it: metadata, not identity
    del held
    gc.collect()
    assert ref() is None and signature_of(((ref,), {}))[0] != alive[0]


def test_what_a_programs_function_closes_over_is_part_of_the_state():
    count = 0

    def bump():
        nonlocal count
        count += 1
        return count

    def walk(x):
        return x + bump()

    before = signature_of(((walk,), {}))
    assert signature_of(((walk,), {})) == before
    bump()  # walk's closure holds bump, whose cell Dynamo guards once it inlines bump
    assert signature_of(((walk,), {})) != before
