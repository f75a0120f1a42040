from mutator.mutation.operators.conversion import (
    DtypeDeviceStrings,
    NoneComparison,
    NumpyRoundTrip,
    ScalarToTensor,
    SizeThroughTensor,
    TensorToScalar,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites


def test_scalar_to_tensor_makes_a_float_operand_a_0d_tensor():
    before = """
        import torch

        def fn(x):
            return x * 0.5
    """
    after = """
        import torch

        def fn(x):
            return x * torch.scalar_tensor(0.5)
    """
    assert_rewrites(ScalarToTensor, before, after, seed=0)


def test_scalar_to_tensor_in_a_comparison():
    before = """
        import torch

        def fn(x):
            return bool(x.sum() > 0)
    """
    after = """
        import torch

        def fn(x):
            return bool(x.sum() > torch.tensor(0))
    """
    assert_rewrites(ScalarToTensor, before, after, seed=1)


def test_scalar_to_tensor_spares_indices_repetition_and_round():
    before = """
        import torch

        def fn(x, i):
            return x[i + 1], "ab" * 2, [x] * 3, round(x.sum().item() * 2, 3)
    """
    assert_declines(ScalarToTensor, before, "no site for scalar_to_tensor in the region")


def test_tensor_to_scalar_turns_a_reduction_operand_into_a_float():
    before = """
        import torch

        def fn(x):
            return x * x.sum()
    """
    after = """
        import torch

        def fn(x):
            return x * float(x.sum())
    """
    assert_rewrites(TensorToScalar, before, after, seed=1)


def test_tensor_to_scalar_round_trips_outside_arithmetic():
    before = """
        import torch

        def fn(x):
            return x.mean()
    """
    after = """
        import torch

        def fn(x):
            return torch.full((), x.mean().item())
    """
    assert_rewrites(TensorToScalar, before, after, seed=0)


def test_tensor_to_scalar_routes_float_through_a_tensor():
    before = """
        import torch

        def fn(x, k):
            return x * float(k)
    """
    after = """
        import torch

        def fn(x, k):
            return x * float(torch.as_tensor(k))
    """
    assert_rewrites(TensorToScalar, before, after, seed=0)


def test_tensor_to_scalar_declines_on_reductions_over_a_dim():
    before = """
        import torch

        def fn(x):
            return x.sum(0) + float("1.5")
    """
    assert_declines(TensorToScalar, before, "no site for tensor_to_scalar in the region")


def test_size_through_tensor_converts_a_shape_entry_back_to_int():
    before = """
        import torch

        def fn(x):
            return torch.zeros(x.shape[0])
    """
    after = """
        import torch

        def fn(x):
            return torch.zeros(int(torch.as_tensor(x.shape[0])))
    """
    assert_rewrites(SizeThroughTensor, before, after, seed=0)


def test_size_through_tensor_passes_a_0d_tensor_as_a_size():
    before = """
        import torch

        def fn(x):
            return x.new_zeros(3, x.size(1))
    """
    after = """
        import torch

        def fn(x):
            return x.new_zeros(3, torch.tensor(x.size(1)))
    """
    assert_rewrites(SizeThroughTensor, before, after, seed=2)


def test_size_through_tensor_declines_without_sizes():
    before = """
        import torch

        def fn(x):
            return x.sin()
    """
    assert_declines(SizeThroughTensor, before, "no site for size_through_tensor in the region")


def test_dtype_device_strings_casts_through_a_type_string():
    before = """
        import torch

        def fn(x):
            return x.double()
    """
    after = """
        import torch

        def fn(x):
            return x.type('torch.DoubleTensor')
    """
    assert_rewrites(DtypeDeviceStrings, before, after, seed=0)


def test_dtype_device_strings_rebuilds_a_dtype_from_its_name():
    before = """
        import torch

        def fn(x, y):
            return x.to(y.dtype)
    """
    after = '''
        import torch


        def dtype_from_string(dtype):
            """The same dtype, looked up again by its name."""
            if isinstance(dtype, torch.dtype):
                return getattr(torch, str(dtype).split('.')[-1])
            return dtype


        def fn(x, y):
            return x.to(dtype_from_string(y.dtype))
    '''
    assert_rewrites(DtypeDeviceStrings, before, after, seed=0)


def test_dtype_device_strings_passes_a_device_for_a_device_string_but_not_to_autocast():
    before = """
        import torch

        def fn(x):
            with torch.autocast("cpu", enabled=False):
                return x.to("cpu") + torch.zeros(2, device="cpu")
    """
    after = """
        import torch

        def fn(x):
            with torch.autocast("cpu", enabled=False):
                return x.to(torch.device("cpu")) + torch.zeros(2, device="cpu")
    """
    assert_rewrites(DtypeDeviceStrings, before, after, seed=1)


def test_dtype_device_strings_declines_without_dtypes_or_devices():
    before = """
        import torch

        def fn(x):
            return torch.randn(3) + x
    """
    assert_declines(DtypeDeviceStrings, before, "no site for dtype_device_strings in the region")


def test_none_comparison_respells_is_none():
    before = """
        import torch

        def fn(x, mask=None):
            if mask is None:
                return x
            return x * mask
    """
    after = """
        import torch

        def fn(x, mask=None):
            if type(mask) is type(None):
                return x
            return x * mask
    """
    assert_rewrites(NoneComparison, before, after, seed=3)


def test_none_comparison_moves_a_default_behind_a_none_test():
    before = '''
        import torch

        def fn(x, scale=2.0):
            """Scale x."""
            return x * scale
    '''
    after = '''
        import torch

        def fn(x, scale=None):
            """Scale x."""
            scale = 2.0 if scale is None else scale
            return x * scale
    '''
    assert_rewrites(NoneComparison, before, after, seed=1)


def test_none_comparison_declines_without_none_tests_or_defaults():
    before = """
        import torch

        def fn(x, mask=None):
            return x if mask == 1 else -x
    """
    assert_declines(NoneComparison, before, "no site for none_comparison in the region")


def test_numpy_round_trip_sends_a_tensor_through_numpy():
    before = """
        import torch

        def fn(x):
            return x.sin() + 1
    """
    after = """
        import torch


        def via_numpy(t):
            if type(t) is not torch.Tensor or t.dtype in (torch.bfloat16, torch.complex32) or t.is_sparse:
                return t
            out = torch.from_numpy(t.detach().numpy().copy())
            return out.requires_grad_() if t.requires_grad else out


        def fn(x):
            return via_numpy(x.sin()) + 1
    """
    assert_rewrites(NumpyRoundTrip, before, after, seed=2)


def test_numpy_round_trip_declines_on_numpy_calls():
    before = """
        import numpy as np
        import torch

        def fn(x):
            return np.sin(x.sum())
    """
    assert_declines(NumpyRoundTrip, before, "no site for numpy_round_trip in the region")
