"""Keys and the plumbing of every sampler: key construction, checks, split, fold_in, bits.

Raw keys (`PRNGKey`) are uint32[2] arrays; the samplers wrap them into typed keys
(`random_wrap`) on entry and unwrap results that are keys, so jaxprs show the same
`random_wrap` / `random_unwrap` equations as JAX's.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from pyjax._src.config import config
from pyjax._src.core import dtypes
from pyjax._src.core.array import Array
from pyjax._src.core.trace_state import trace_state
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.primitives import prng
from pyjax._src.primitives import shape as shp
from pyjax._src.random import fast_keys, threefry
from pyjax._src.random.keys import KeyTy, PRNGImpl, prngs
from pyjax._src.parallel.placement import with_out_sharding

Shape = Sequence[int]
UINT_DTYPES = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}
assert threefry.threefry_prng_impl.name in prngs


# ---------------------------------------------------------------------------------------------
# Implementations and key types
# ---------------------------------------------------------------------------------------------

class PRNGSpec:
    """A PRNG implementation as the public API names it."""

    __slots__ = ("_impl",)

    def __init__(self, impl: PRNGImpl):
        self._impl = impl

    def __repr__(self) -> str:
        return f"PRNGSpec({self._impl.name!r})"

    def __str__(self) -> str:
        return str(self._impl)

    def __hash__(self) -> int:
        return hash(self._impl)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PRNGSpec) and self._impl == other._impl


def default_prng_impl() -> PRNGImpl:
    """The implementation named by the `jax_default_prng_impl` flag."""
    return prngs[config.default_prng_impl]


def resolve_prng_impl(spec: Any) -> PRNGImpl:
    """An implementation from a name, spec, key dtype or impl (None: the default)."""
    if spec is None:
        return default_prng_impl()
    if type(spec) is PRNGImpl:
        return spec
    if type(spec) is PRNGSpec:
        return spec._impl
    if isinstance(spec, KeyTy):
        return spec._impl
    if type(spec) is str:
        if spec in prngs:
            return prngs[spec]
        names = ", ".join(f'"{s}"' for s in prngs)
        raise ValueError(f'unrecognized PRNG implementation "{spec}". Did you mean one of: '
                         f"{names}?")
    raise TypeError(f"unrecognized type {type(spec)} for specifying PRNG implementation.")


def key_dtype(impl: Any = None) -> KeyTy:
    """The key dtype of a PRNG implementation."""
    return KeyTy(resolve_prng_impl(impl))


def is_key(x: Any) -> bool:
    return isinstance(getattr(x, "dtype", None), KeyTy)


# ---------------------------------------------------------------------------------------------
# Key checks
# ---------------------------------------------------------------------------------------------

def _arraylike(x: Any) -> bool:
    return isinstance(x, (np.ndarray, Array)) or hasattr(x, "__jax_array__") or np.isscalar(x)


def check_prng_key(name: str, key: Any, *, allow_batched: bool = False) -> tuple[Any, bool]:
    """(typed key, whether it was a raw uint32 key that we wrapped)."""
    if isinstance(key, Array) and is_key(key):
        typed, wrapped = key, False
    elif _arraylike(key):
        typed, wrapped = prng.random_wrap(key, impl=default_prng_impl()), True
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and typed.ndim:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{np.shape(key)} != (). Use jax.vmap for batching.")
    return typed, wrapped


def return_keys(was_wrapped: bool, keys: Any) -> Any:
    """Raw keys in, raw keys out."""
    return prng.random_unwrap(keys) if was_wrapped else keys


# ---------------------------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------------------------

def broadcast_shapes(*shapes: Shape) -> tuple[int, ...]:
    """lax.broadcast_shapes: NumPy's rule; negative sizes are rejected as in JAX."""
    shapes = [tuple(s) for s in shapes]
    for s in shapes:
        if any(d < 0 for d in s):
            raise TypeError("Only non-negative indices are allowed when broadcasting static "
                            f"shapes, but got shape {s}.")
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None


def check_shape(name: str, shape: Shape, *param_shapes: Shape) -> None:
    """The parameters' shapes must broadcast to exactly `shape`."""
    if param_shapes:
        result = broadcast_shapes(shape, *param_shapes)
        if tuple(shape) != result:
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                             "argument, and the result of broadcasting the shapes must equal the "
                             f"shape argument, but got result {result} for shape argument "
                             f"{tuple(shape)}.")


def canonicalize_shape(shape: Any) -> tuple[int, ...]:
    return lnp.canonicalize_shape(shape)


def shape_or_broadcast(name: str, shape: Any, *args: Any) -> tuple[int, ...]:
    """`shape` checked against the parameters' shapes, or their broadcast shape if None."""
    arg_shapes = [np.shape(a) for a in args]
    if shape is None:
        return broadcast_shapes(*arg_shapes) if arg_shapes else ()
    shape = canonicalize_shape(shape)
    check_shape(name, shape, *arg_shapes)
    return shape


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """x with leading size-1 axes up to `rank` (lax.broadcast_to_rank)."""
    ndim = np.ndim(x)
    return x if ndim == rank else shp.broadcast(x, (1,) * (rank - ndim))


def float_dtype(name: str, dtype: Any, kind: str = "float") -> np.dtype:
    """A user's dtype (default: the default float), which must be floating (or inexact)."""
    dtype = dtypes.check_user_dtype(float if dtype is None else dtype)
    ok = dtypes.is_inexact(dtype) if kind == "float or complex" else dtypes.is_float(dtype)
    if not ok:
        raise ValueError(f"dtype argument to `{name}` must be a {kind} dtype, got {dtype}")
    return dtype


def check_safe_to_cast(name: str, dtype: np.dtype, *args: Any) -> None:
    """Each parameter must promote to `dtype` (a strong float64 may not become float32)."""
    for arg in args:
        arg_dtype, weak = dtypes.dtype_and_weak(arg)
        if arg_dtype != dtype and dtypes.promote([(arg_dtype, weak), (dtype, False)])[0] != dtype:
            raise dtypes.TypePromotionError(f"In arguments to {name}, cannot safely cast "
                                            f"argument of type {arg_dtype} to {dtype}")


def sampler_args(name: str, key: Any, shape: Any, dtype: Any, *params: Any,
                 kind: str = "float") -> tuple[Any, tuple[int, ...], np.dtype]:
    """The checked (key, shape, dtype) of a sampler with float parameters `params`: shape
    defaults to their broadcast shape, and each must cast safely to dtype."""
    key, _ = check_prng_key(name, key)
    dtype = float_dtype(name, dtype, kind)
    shape = shape_or_broadcast(name, shape, *params)
    check_safe_to_cast(name, dtype, *params)
    return key, shape, dtype


# ---------------------------------------------------------------------------------------------
# Key operations
# ---------------------------------------------------------------------------------------------

def _key(ctor_name: str, seed: Any, impl_spec: Any) -> Any:
    impl = resolve_prng_impl(impl_spec)
    if is_key(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed)} != (). Use jax.vmap for batching")
    # Python ints go through int64 first, so large seeds wrap (not overflow) with x64 off
    seeds = lnp.asarray(np.int64(seed) if isinstance(seed, int) else seed)
    return prng.random_seed(seeds, impl)


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> Any:
    """A typed PRNG key (dtype `key<fry>`) from an integer seed."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.key")
        impl = dtype
    return _key("key", seed, impl)


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:  # noqa: N802 - JAX's name
    """A raw PRNG key (uint32[2]) from an integer seed."""
    return prng.random_unwrap(_key("PRNGKey", seed, impl))


def split_typed(key: Any, num: int | tuple[int, ...] = 2) -> Any:
    """`split` of a typed key, for use inside samplers."""
    if key.ndim:
        raise TypeError("split accepts a single key, but was given a key array of shape "
                        f"{key.shape} != (). Use jax.vmap for batching.")
    shape = tuple(num) if isinstance(num, Sequence) else (operator.index(num),)
    return prng.random_split(key, shape)


def split(key: Any, num: int | tuple[int, ...] = 2) -> Any:
    """`num` new keys (or an array of keys of shape `num`) from `key`."""
    if trace_state.trace is None:  # eager, with one concrete key: the native hash (fast_keys.py)
        out = fast_keys.split(key, num)
        if out is not None:
            return out
    typed, wrapped = check_prng_key("split", key)
    return return_keys(wrapped, split_typed(typed, num))


def unpack(keys: Any) -> list:
    """The keys along the first axis of a key array (slice and squeeze, as JAX unpacks)."""
    n, rest = keys.shape[0], keys.shape[1:]
    ones = (1,) * len(rest)
    return [shp.squeeze(shp.slice(keys, (i, *(0,) * len(rest)), (i + 1, *rest), (1, *ones)),
                        (0,)) for i in range(n)]


def fold_in(key: Any, data: Any) -> Any:
    """A new key from `key` and a 32-bit integer."""
    if trace_state.trace is None:  # eager, with one concrete key: the native hash (fast_keys.py)
        out = fast_keys.fold_in(key, data)
        if out is not None:
            return out
    typed, wrapped = check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError("fold_in accepts a scalar, but was given an array of"
                        f"shape {np.shape(data)} != (). Use jax.vmap for batching.")
    return return_keys(wrapped, prng.random_fold_in(typed, lnp.asarray(data, dtype="uint32")))


def key_data(keys: Any) -> Any:
    """The uint32 data of keys (raw keys are returned as they are)."""
    typed, _ = check_prng_key("key_data", keys, allow_batched=True)
    return prng.random_unwrap(typed)


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> Any:
    """Typed keys over uint32 key data (trailing axes: the key shape)."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.wrap_key_data")
        impl = dtype
    return prng.random_wrap(key_bits_array, impl=resolve_prng_impl(impl))


def key_impl(keys: Any) -> str | PRNGSpec:
    """The name of the keys' PRNG implementation."""
    typed, _ = check_prng_key("key_impl", keys, allow_batched=True)
    impl = typed.dtype._impl
    return impl.name if impl.name in prngs else PRNGSpec(impl)


def clone(key: Any) -> Any:
    """A copy of `key` (identical keys)."""
    return prng.random_clone(key)


def random_bits(key: Any, bit_width: int, shape: Shape) -> Any:
    return prng.random_bits(key, bit_width, tuple(shape))


@with_out_sharding("bits")
def bits(key: Any, shape: Shape = (), dtype: Any = None) -> Any:
    """Uniform random bits as unsigned integers (default uint32, uint64 under x64)."""
    typed, _ = check_prng_key("bits", key)
    dtype = dtypes.default_uint_dtype() if dtype is None else dtypes.check_user_dtype(dtype)
    if not dtypes.is_unsigned(dtype):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return random_bits(typed, dtype.itemsize * 8, canonicalize_shape(shape))
