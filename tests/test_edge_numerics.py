"""Values at the edges as XLA computes them on the CPU (checked against JAX 0.10.2): signed
zeros of max/min/sign, complex expm1 special values, lgamma and digamma poles."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax


def _bits(x):
    x = np.asarray(x)
    return x.tolist(), np.signbit(x).tolist()


@pytest.mark.parametrize("fn, args, expected", [
    (jnp.maximum, (0., -0.), 0.0), (jnp.maximum, (-0., 0.), 0.0),
    (jnp.maximum, (-0., -0.), -0.0),
    (jnp.minimum, (0., -0.), -0.0), (jnp.minimum, (-0., 0.), -0.0),
    (jnp.minimum, (0., 0.), 0.0),
    (jnp.sign, (-0.,), -0.0), (jnp.sign, (0.,), 0.0),
])
@pytest.mark.parametrize("jit", [False, True])
def test_signed_zeros(fn, args, expected, jit):
    out = (jax.jit(fn) if jit else fn)(*args)
    assert _bits(out) == _bits(np.float32(expected))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_signed_zeros_other_floats(dtype):
    z = jnp.array([-0.0], dtype)
    assert np.signbit(np.asarray(jnp.maximum(z, 0)).astype(np.float32)).tolist() == [False]
    assert np.signbit(np.asarray(jnp.sign(z)).astype(np.float32)).tolist() == [True]


def test_signed_zeros_float64(x64):
    z = jnp.array([-0.0], "float64")
    assert _bits(jnp.maximum(z, 0.)) == ([0.0], [False])
    assert _bits(jnp.minimum(0., z)) == ([-0.0], [True])


def test_sign_keeps_nan_and_ints():
    np.testing.assert_array_equal(jnp.sign(jnp.array([np.nan, -2., 3.])), [np.nan, -1, 1])
    np.testing.assert_array_equal(jnp.sign(jnp.array([-3, 0, 4])), [-1, 0, 1])


@pytest.mark.parametrize("z, expected", [
    (complex(np.inf, 0), complex(np.inf, 0)), (complex(-np.inf, 0), complex(-1, 0)),
    (complex(np.nan, 0), complex(np.nan, 0)), (complex(-np.inf, 1), complex(-1, 0)),
    (complex(np.inf, 1), complex(np.inf, np.inf)),
])
def test_complex_expm1_special_values(z, expected):
    out = complex(jnp.expm1(jnp.complex64(z)))
    np.testing.assert_equal((out.real, out.imag), (expected.real, expected.imag))


def test_lgamma_digamma_poles():
    assert float(lax.lgamma(-jnp.inf)) == np.inf
    assert np.isnan(float(lax.digamma(0.))) and np.isnan(float(lax.digamma(-0.)))


def test_jit_drops_adding_zero_as_xla_does():
    """XLA's simplifier rewrites x + 0 and x - 0 to x, so under jit -0. stays -0. (JAX
    0.10.2); eagerly the addition happens and gives +0."""
    for f in (lambda a: a + 0., lambda a: 0. + a, lambda a: a - 0.):
        out = jax.jit(f)(jnp.float32(-0.))
        assert float(out) == 0 and np.signbit(out)
    assert not np.signbit(jnp.float32(-0.) + 0.)
