import math

from mutator.judge.compare import compare_observations, compare_stdout, exceptions_match
from mutator.core.observation import Observation
from mutator.core.values import MapValue, ObjectValue, SeqValue

from tests.helpers import call, exc, stdout, tensor


def diverges(e_value, c_value, r_value=None):
    eager = Observation(calls=(call(result=e_value),))
    compiled = Observation(calls=(call(result=c_value),))
    reference = Observation(calls=(call(result=r_value),)) if r_value is not None else None
    return compare_observations(eager, compiled, reference)


def test_float32_values_within_assert_close_tolerance_match():
    assert diverges(tensor([1.0, 2.0]), tensor([1.0 + 1e-6, 2.0])) == []


def test_float32_values_beyond_tolerance_diverge_as_numeric():
    [d] = diverges(tensor([1.0, 2.0]), tensor([1.0, 2.1]))
    assert d.aspect == "value" and d.numeric and "max abs diff 0.1" in d.detail


def test_nan_in_the_same_place_is_agreement():
    assert diverges(tensor([math.nan, 1.0]), tensor([math.nan, 1.0])) == []
    assert diverges(tensor([math.nan, 1.0]), tensor([0.0, 1.0]))


def test_dtype_shape_and_requires_grad_are_compared_before_values():
    assert diverges(tensor([1.0]), tensor([1.0], "torch.float64"))[0].aspect == "dtype"
    assert diverges(tensor([1.0, 2.0]), tensor([[1.0, 2.0]]))[0].aspect == "shape"
    assert diverges(tensor([1.0], requires_grad=True), tensor([1.0]))[0].aspect == "requires_grad"


def test_integer_tensors_compare_exactly():
    [d] = diverges(tensor([1, 2, 3], "torch.int64"), tensor([1, 2, 4], "torch.int64"))
    assert not d.numeric and "1 of 3 values differ" in d.detail


def test_aliasing_an_input_is_observed():
    [d] = diverges(tensor([1.0], alias="arg0"), tensor([1.0]))
    assert d.aspect == "alias"


def test_float64_reference_forgives_noise_that_eager_shares():
    # large sums: eager is 0.02 off the float64 truth, compiled 0.02 off the other way;
    # they differ by 0.04, beyond float32's tolerance at this magnitude, yet both are noise
    assert diverges(tensor([10000.0]), tensor([10000.04]), tensor([10000.02], "torch.float64")) == []


def test_float64_reference_does_not_forgive_a_real_difference():
    [d] = diverges(tensor([1.0]), tensor([3.0]), tensor([1.0000001], "torch.float64"))
    assert "beyond the float64 reference" in d.detail


def test_python_floats_use_float32_tolerance():
    assert diverges(1.0, 1.0 + 1e-7) == []
    assert diverges(1.0, 1.5)[0].numeric


def test_type_changes_are_divergences():
    assert diverges(1, 1.0)[0].aspect == "type"
    assert diverges(SeqValue("list", (1,)), SeqValue("tuple", (1,)))[0].aspect == "type"


def test_dict_order_and_keys():
    a = MapValue("dict", (("x", 1), ("y", 2)))
    b = MapValue("dict", (("y", 2), ("x", 1)))
    c = MapValue("dict", (("x", 1),))
    assert "different order" in diverges(a, b)[0].detail
    assert "only eager has ['y'], only compiled has []" in diverges(a, c)[0].detail


def test_object_attributes_added_or_removed():
    a = ObjectValue("Cfg", (("k", 1),))
    b = ObjectValue("Cfg", (("k", 1), ("extra", 2)))
    [d] = diverges(a, b)
    assert d.aspect == "missing" and "only compiled has: ['extra']" in d.detail


def test_call_count_difference():
    eager = Observation(calls=(call(0), call(1)))
    compiled = Observation(calls=(call(0),))
    assert compare_observations(eager, compiled)[0].observation == "calls"


def test_stdout_numbers_equal_to_printed_precision():
    assert compare_stdout(stdout("loss 0.1235\n"), stdout("loss 0.1234\n")) == []
    assert compare_stdout(stdout("tensor([1.0000, 2.5000])"), stdout("tensor([1.0000, 2.5001])")) == []
    assert compare_stdout(stdout("loss 0.12\n"), stdout("loss 0.15\n")) != []
    [line] = compare_stdout(stdout("a\nb\n"), stdout("a\nc\n"))
    assert line.detail.startswith("line 2") and line.where == "stdout line 2"


def test_a_printed_grad_fn_name_is_the_backends_but_the_rest_of_the_line_counts():
    eager = stdout("out tensor([2., 3.], grad_fn=<AddBackward0>)\nnode <AddBackward0 object at 0x7f3a10>\n")
    aot = stdout("out tensor([2., 3.], grad_fn=<CompiledFunctionBackward>)\n"
                 "node <torch.autograd.function.CompiledFunctionBackward object at 0x7f3a10>\n")
    assert compare_stdout(eager, aot) == []
    [value] = compare_stdout(eager, stdout(aot.head.replace("3.", "4.")))
    assert value.where == "stdout line 1"
    [leaf] = compare_stdout(stdout("tensor([2.], grad_fn=<AddBackward0>)"), stdout("tensor([2.], requires_grad=True)"))
    assert leaf.where == "stdout line 1"  # a node against none: not the same tensor


def test_output_past_what_is_kept_is_compared_without_grad_fn_names_too():
    from mutator.runtime.execute import BoundedStdout

    printed = []
    for node in ("AddBackward0", "CompiledFunctionBackward"):
        out = BoundedStdout(16)
        out.write(f"tensor([2.], grad_fn=<{node}>)\n" * 3)
        printed.append(out.result())
    assert printed[0].truncated and compare_stdout(*printed) == []


def test_a_tensors_repr_kept_as_text_is_compared_without_its_grad_fn_name():
    assert diverges("tensor([0.7311], grad_fn=<SigmoidBackward0>)", "tensor([0.7311], grad_fn=<CompiledFunctionBackward>)") == []
    assert diverges("tensor([0.7311], grad_fn=<SigmoidBackward0>)", "tensor([0.8176], grad_fn=<CompiledFunctionBackward>)")
    assert diverges("grad_fn", "requires_grad")


def test_a_printed_sets_order_is_the_hash_tables_but_its_elements_and_a_dicts_order_count():
    # Dynamo rebuilds `s | u` in its own insertion order: same elements, another table order
    eager = stdout("({'one', 'three', 'two'}, MySet({'one', 'three', 'two'}))\n")
    compiled = stdout("({'three', 'one', 'two'}, MySet({'three', 'one', 'two'}))\n")
    assert compare_stdout(eager, compiled) == []
    assert compare_stdout(stdout("frozenset({3, 1})\n"), stdout("frozenset({1, 3})\n")) == []
    assert compare_stdout(stdout("{'one', 'two'}\n"), stdout("{'one', 'four'}\n")) != []
    assert compare_stdout(stdout("{'a': 1, 'b': 2}\n"), stdout("{'b': 2, 'a': 1}\n")) != []  # a dict keeps its order
    assert compare_stdout(stdout("[3, 1]\n"), stdout("[1, 3]\n")) != []
    assert diverges("{0.5, 2.25}", "{2.25, 0.5}") == []  # a repr kept as text


def test_stdout_lines_are_masked_one_by_one():
    eager, compiled = stdout("tid 17\nloss 1\ntid 18\n"), stdout("tid 40\nloss 2\ntid 41\n")
    assert [d.where for d in compare_stdout(eager, compiled, every_line=True)] == \
        ["stdout line 1", "stdout line 2", "stdout line 3"]
    [left] = compare_stdout(eager, compiled, mask=frozenset({"stdout line 1", "stdout line 3"}))
    assert left.where == "stdout line 2"
    assert compare_stdout(eager, compiled, mask=frozenset({"stdout"})) == []


def test_a_run_that_stopped_early_is_compared_with_the_first_part_of_the_other():
    assert compare_stdout(stdout("a\n"), stdout("a\nb\n"), stopped="eager") == []
    assert compare_stdout(stdout("a\nb\n"), stdout("a\n"), stopped="eager")[0].where == "stdout"
    assert compare_stdout(stdout("a\nb\n"), stdout("a\n"), stopped="compiled") == []
    calls = Observation(calls=(call(0, result=1), call(1, result=2)))
    assert compare_observations(calls, Observation(calls=(call(0, result=1),)), stopped="compiled") == []
    assert compare_observations(calls, Observation(calls=(call(0, result=1),)))[0].observation == "calls"


def test_masked_value_paths_and_everything_below_them_are_skipped():
    eager = Observation(calls=(call(result=SeqValue("list", (1, 2))),))
    compiled = Observation(calls=(call(result=SeqValue("list", (1, 3))),))
    [d] = compare_observations(eager, compiled)
    assert d.where == "call 1 (fn) result[1]"
    assert compare_observations(eager, compiled, mask=frozenset({"call 1 (fn) result[1]"})) == []
    assert compare_observations(eager, compiled, mask=frozenset({"call 1 (fn) result"})) == []


def test_names_label_the_two_runs():
    eager = Observation(calls=(call(result=1),))
    again = Observation(calls=(call(result=2),))
    [d] = compare_observations(eager, again, names=("first eager run", "second"))
    assert d.detail == "first eager run 1, second 2"


def test_exception_match_allows_dynamo_wrappers_but_not_internal_errors():
    runtime = exc("RuntimeError")
    wrapped = exc("torch._dynamo.exc.TorchRuntimeError", bases=("torch._dynamo.exc.TorchDynamoException", "RuntimeError"))
    internal = exc("torch._dynamo.exc.InternalTorchDynamoError",
                   bases=("torch._dynamo.exc.TorchDynamoException", "RuntimeError"))
    assert exceptions_match(runtime, wrapped)
    assert not exceptions_match(runtime, internal)
    assert not exceptions_match(runtime, None)
    assert exceptions_match(None, None)


def test_a_reference_that_disagrees_with_eager_explains_nothing():
    # the float64 run computed something else (different random draws, say): no forgiveness
    [d] = diverges(tensor([1.0, 2.0]), tensor([2.0, 3.0]), tensor([7.0, -4.0], "torch.float64"))
    assert d.numeric
    assert diverges(1.0, 2.0, 9.0)
