"""Specialised impls of shape primitives (what jit and eager plans run): broadcast_in_dim's is a
read-only view of its operand with the bits and strides np.broadcast_to gives, slice's the
general impl's view, for every kind of operand buffer."""
import ml_dtypes
import numpy as np
import pytest

from pyjax._src.core.avals import ShapedArray
from pyjax._src.primitives.shape import broadcast_in_dim_p

CASES = [  # operand shape, result shape, broadcast_dimensions
    ((256,), (4, 256), (1,)),
    ((3, 5), (2, 3, 4, 5), (1, 3)),
    ((1, 5), (3, 5), (0, 1)),
    ((), (2, 3), ()),
    ((0,), (4, 0), (1,)),
    ((4, 256), (4, 4, 256), (1, 2)),
]


def _operands(shape, dtype):
    """A C-contiguous buffer, a strided view, a reversed view and an offset view of `shape`."""
    size = int(np.prod(shape))
    base = (np.arange(4 * size + 4) % 7).astype(dtype)
    yield base[:size].reshape(shape)
    yield base[::2][:size].reshape(shape)
    yield base[:size][::-1].reshape(shape)
    yield base[3:3 + size].reshape(shape)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_, np.complex64,
                                   ml_dtypes.bfloat16])
@pytest.mark.parametrize("case", CASES)
def test_specialised_broadcast_is_a_read_only_view(case, dtype):
    shape, out_shape, dims = case
    impl = broadcast_in_dim_p.specialize(ShapedArray(shape, np.dtype(dtype)), shape=out_shape,
                                         broadcast_dimensions=dims)
    expanded = [1] * len(out_shape)
    for d, n in zip(dims, shape):
        expanded[d] = n
    for x in _operands(shape, dtype):
        out = impl(x)
        want = np.broadcast_to(x.reshape(expanded), out_shape)
        assert type(out) is np.ndarray and out.dtype == want.dtype
        np.testing.assert_array_equal(out, want)
        assert out.strides == want.strides
        assert not out.flags.writeable
        if x.size and out.size > x.size:
            assert np.shares_memory(out, x)


SLICES = [  # operand shape, start_indices, limit_indices, strides
    ((4, 256), (3, 0), (4, 256), None),
    ((4, 256), (0, 0), (3, 256), (1, 1)),
    ((5, 7, 3), (1, 2, 0), (5, 7, 3), (2, 3, 1)),
    ((6,), (2,), (2,), None),
    ((), (), (), None),
]


@pytest.mark.parametrize("dtype", [np.float32, np.bool_, ml_dtypes.bfloat16])
@pytest.mark.parametrize("case", SLICES)
def test_specialised_slice_is_the_impls_view(case, dtype):
    """slice's specialised impl gives the general impl's view (values, strides, memory)."""
    from pyjax._src.primitives.shape import slice_p
    shape, start, limit, strides = case
    params = dict(start_indices=start, limit_indices=limit, strides=strides)
    impl = slice_p.specialize(ShapedArray(shape, np.dtype(dtype)), **params)
    for x in _operands(shape, dtype):
        out, want = impl(x), np.asarray(slice_p.impl(x, **params))  # (0-d: a NumPy scalar)
        assert type(out) is np.ndarray and out.dtype == want.dtype
        np.testing.assert_array_equal(out, want)
        assert out.strides == want.strides and out.shape == want.shape
        assert out.size == 0 or np.shares_memory(out, x)
