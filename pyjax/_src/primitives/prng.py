"""PRNG primitives: the Threefry-2x32 hash and the key-array primitives of `jax.random`.

`threefry2x32` hashes pairs of uint32 counters under a uint32 key pair (20 rounds).  The key-array
primitives (`random_seed`, `random_split`, `random_fold_in`, `random_bits`, `random_wrap`,
`random_unwrap`, `random_clone`) take and give arrays of a key dtype (`key<fry>`), which are held
as a physical uint32 buffer with trailing key axes; their impls work on that buffer and are
vectorised over leading key axes (so their batch rules let batch axes pass through).
Their eager rule unwraps and rewraps `PRNGKeyArray`s.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from pyjax._src.backend.dispatch import abstract_eval_cached, aval_of, detach, to_buffer, wrap
from pyjax._src.backend.tier1 import threefry
from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import pp_eqn_standard
from pyjax._src.core.primitive import Primitive
from pyjax._src.primitives._rules import make_primitive
from pyjax._src.transforms.batching import broadcasting_batcher, defbroadcasting
from pyjax._src.random.keys import KeyTy, PRNGImpl, check_key_data
from pyjax._src.transforms import ad, batching

# ---------------------------------------------------------------------------------------------
# threefry2x32
# ---------------------------------------------------------------------------------------------

_ROTATIONS = threefry.ROTATIONS
_PARITY = np.uint32(threefry.PARITY)
_CHUNK = 1 << 15  # elements hashed at a time: the round temporaries stay in cache


def _hash_block(k1: np.ndarray, k2: np.ndarray, x1: np.ndarray, x2: np.ndarray,
                a: np.ndarray, b: np.ndarray, tmp: np.ndarray) -> None:
    """Threefry-2x32 (20 rounds, Random123's rotations and key schedule) of flat arrays (or
    scalars), written into the flat outputs a, b (tmp: scratch of their size)."""
    ks = (k1, k2, k1 ^ k2 ^ _PARITY)
    np.add(x1, ks[0], out=a)
    np.add(x2, ks[1], out=b)
    for block in range(5):
        for r in _ROTATIONS[block % 2]:
            a += b
            np.left_shift(b, np.uint32(r), out=tmp)
            b >>= np.uint32(32 - r)
            b |= tmp
            b ^= a
        a += ks[(block + 1) % 3]
        b += ks[(block + 2) % 3]
        b += np.uint32(block + 1)


_SMALL = 16  # at most this many counters hash as Python ints while the native kernel is not
# ready: NumPy's per-call cost dominates
_MASK = 0xFFFFFFFF


def _hash_ints(k1: int, k2: int, x1: int, x2: int) -> tuple[int, int]:
    """`_hash_block` of one counter pair in Python integers kept to 32 bits (the same
    arithmetic, faster than NumPy for a few keys: split and fold_in of one key)."""
    ks = (k1, k2, k1 ^ k2 ^ int(_PARITY))
    a, b = (x1 + k1) & _MASK, (x2 + k2) & _MASK
    for block in range(5):
        for r in _ROTATIONS[block % 2]:
            a = (a + b) & _MASK
            b = (((b << r) & _MASK) | (b >> (32 - r))) ^ a
        a = (a + ks[(block + 1) % 3]) & _MASK
        b = (b + ks[(block + 2) % 3] + block + 1) & _MASK
    return a, b


def _flat(v: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A 0-d array if `v` holds one value, else `v` broadcast to `shape` and flattened."""
    if v.size == 1:
        return v.reshape(())
    return (v if v.shape == shape else np.broadcast_to(v, shape)).reshape(-1)


def _common_shape(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """np.broadcast_shapes, without its cost when one shape holds every other's elements
    (a key of shape (1, 1) beside counters of shape (4, 2), say)."""
    widest = max(shapes, key=lambda s: (len(s), math.prod(s)))
    if all(s == widest for s in shapes) or (
            math.prod(widest) != 1 and all(s == widest or math.prod(s) == 1 for s in shapes)):
        return widest
    return np.broadcast_shapes(*shapes)


def threefry2x32_impl(k1: np.ndarray, k2: np.ndarray, x1: np.ndarray, x2: np.ndarray
                      ) -> list[np.ndarray]:
    """The hash of counters (x1, x2) under key (k1, k2), all broadcast together (uint32)."""
    args = [v if type(v) is np.ndarray and v.dtype == np.uint32 else np.asarray(v, np.uint32)
            for v in (k1, k2, x1, x2)]
    shape = _common_shape([v.shape for v in args])
    size = math.prod(shape)
    flat = [_flat(v, shape) for v in args]
    native = threefry.hash2x32(*flat, size)  # None until tier 1 has compiled it
    if native is not None:
        return [native[0].reshape(shape), native[1].reshape(shape)]
    if size <= _SMALL:
        pairs = [_hash_ints(*map(int, q)) for q in np.broadcast(*args)]
        return [np.array([p[i] for p in pairs], np.uint32).reshape(shape) for i in range(2)]
    out1, out2 = np.empty(size, np.uint32), np.empty(size, np.uint32)
    tmp = np.empty(min(size, _CHUNK), np.uint32)
    for start in range(0, size, _CHUNK):
        part = slice(start, min(start + _CHUNK, size))
        n = part.stop - part.start
        chunk = [v if v.ndim == 0 else v[part] for v in flat]
        _hash_block(*chunk, out1[part], out2[part], tmp[:n])
    return [out1.reshape(shape), out2.reshape(shape)]


def _broadcast_shape(name: str, avals: Sequence[ShapedArray]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*(a.shape for a in avals)))
    except ValueError:
        raise TypeError(f"{name}: incompatible shapes for broadcasting: "
                        f"{', '.join(str(a.shape) for a in avals)}") from None


def _threefry2x32_abstract(*avals: ShapedArray) -> list[ShapedArray]:
    if any(a.dtype != dtypes.uint32 for a in avals):
        raise TypeError(f"Arguments to threefry2x32 must have uint32 type, got {list(avals)}")
    aval = ShapedArray(_broadcast_shape("threefry2x32", avals), dtypes.uint32)
    return [aval, aval]


threefry2x32_p = make_primitive("threefry2x32", threefry2x32_impl, _threefry2x32_abstract,
                                multiple_results=True)
defbroadcasting(threefry2x32_p)


def threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> list:
    """The Threefry-2x32 hash as a primitive: two uint32 arrays of the broadcast shape."""
    return threefry2x32_p.bind(k1, k2, x1, x2)


# ---------------------------------------------------------------------------------------------
# Key-array primitives
# ---------------------------------------------------------------------------------------------

def _key_eager(prim: Primitive, args: tuple, params: dict) -> Any:
    """Eager rule: physical buffers into the impl, key-typed results wrapped as key arrays."""
    out_aval = abstract_eval_cached(prim, [aval_of(x) for x in args], params)
    out = detach(prim.impl(*(to_buffer(x)[0] for x in args), **params), args,
                 prim.multiple_results)  # never a view of the caller's NumPy key data
    if prim.multiple_results:
        return [wrap(b, a) for b, a in zip(out, out_aval)]
    return wrap(out, out_aval)


def key_primitive(name: str, impl: Any, abstract_eval: Any, shown: Sequence[str] | None = None
                  ) -> Primitive:
    """A key primitive; params not in `shown` (the PRNG impl) are hidden when printed, as JAX
    keeps the impl in the key type rather than in the equation."""
    prim = make_primitive(name, impl, abstract_eval)
    prim.eager = _key_eager
    if shown is not None:
        prim.pp_rule = lambda eqn, context: pp_eqn_standard(eqn, context, list(shown))
    return prim


def _keys_aval(aval: ShapedArray, name: str) -> KeyTy:
    if not isinstance(aval.dtype, KeyTy):
        raise TypeError(f"{name} takes key array operand, got keys.dtype={aval.dtype}")
    return aval.dtype


def _check_shape(shape: Sequence[int]) -> None:
    """JAX's error for a negative size (MLIR's, where JAX lowers the key data's type)."""
    if any(d < 0 for d in shape):
        from pyjax._src.errors import MLIRError
        raise MLIRError("Invalid type:\nerror: unknown: invalid tensor dimension size")


# random_seed -----------------------------------------------------------------------------------

def _seed_abstract(seeds: ShapedArray, *, impl: PRNGImpl) -> ShapedArray:
    if not dtypes.is_integer(seeds.dtype):
        raise TypeError(f"PRNG key seed must be an integer; got JitTracer({seeds})")
    return ShapedArray(seeds.shape, KeyTy(impl))


random_seed_p = key_primitive("random_seed", lambda seeds, *, impl: impl.seed(seeds),
                               _seed_abstract)


# random_split ----------------------------------------------------------------------------------

def _split_abstract(keys: ShapedArray, *, shape: tuple[int, ...], impl: PRNGImpl) -> ShapedArray:
    _check_shape(shape)
    return ShapedArray((*keys.shape, *shape), _keys_aval(keys, "random_split"))


random_split_p = key_primitive(
    "random_split", lambda keys, *, shape, impl: impl.split(keys, shape), _split_abstract,
    shown=("shape",))


# random_fold_in --------------------------------------------------------------------------------

def _fold_in_abstract(keys: ShapedArray, msgs: ShapedArray, *, impl: PRNGImpl) -> ShapedArray:
    dtype = _keys_aval(keys, "random_fold_in")
    return ShapedArray(_broadcast_shape("random_fold_in", (keys, msgs)), dtype)


random_fold_in_p = key_primitive(
    "random_fold_in", lambda keys, msgs, *, impl: impl.fold_in(keys, msgs), _fold_in_abstract,
    shown=())


# random_bits -----------------------------------------------------------------------------------

def _bits_abstract(keys: ShapedArray, *, bit_width: int, shape: tuple[int, ...], impl: PRNGImpl
                   ) -> ShapedArray:
    _keys_aval(keys, "random_bits")
    _check_shape(shape)
    return ShapedArray((*keys.shape, *shape), np.dtype(f"uint{bit_width}"))


random_bits_p = key_primitive(
    "random_bits", lambda keys, *, bit_width, shape, impl: impl.random_bits(keys, bit_width, shape),
    _bits_abstract, shown=("bit_width", "shape"))


# random_wrap / random_unwrap / random_clone ----------------------------------------------------

def _wrap_abstract(base: ShapedArray, *, impl: PRNGImpl) -> ShapedArray:
    check_key_data(impl, base)
    return ShapedArray(base.shape[:base.ndim - len(impl.key_shape)], KeyTy(impl))


def _unwrap_abstract(keys: ShapedArray) -> ShapedArray:
    dtype = _keys_aval(keys, "random_unwrap")
    return ShapedArray((*keys.shape, *dtype._impl.key_shape), dtypes.uint32)


def _identity(x: np.ndarray, **_: Any) -> np.ndarray:
    return x


random_wrap_p = key_primitive("random_wrap", _identity, _wrap_abstract)
random_unwrap_p = key_primitive("random_unwrap", _identity, _unwrap_abstract)
random_clone_p = key_primitive("random_clone", _identity, lambda keys: keys)


def _wrap_batch(vals: Sequence[Any], dims: Sequence[Any], *, impl: PRNGImpl) -> tuple:
    """Key data batched at its front (the trailing axes are the key's own)."""
    base, = vals
    return random_wrap_p.bind(batching.move_axis(base, dims[0], 0), impl=impl), 0


random_wrap_p.batch = _wrap_batch

# Keys and random bits are not differentiable: every output tangent is a symbolic zero (float0
# for keys and integers), as JAX's defjvp_zero rules make them.
for _prim in (threefry2x32_p, random_seed_p, random_split_p, random_fold_in_p, random_bits_p,
              random_wrap_p, random_unwrap_p, random_clone_p):
    ad.defjvp_zero(_prim)


# -- batching ----------------------------------------------------------------------------------
# The impls work on any leading key axes, so a batch axis (never among the key's trailing data
# axes) passes through; random_fold_in broadcasts keys against messages like lax's binary ops.
# Batch axes of key arrays are moved on their key data (unwrapped, moved, rewrapped): pyjax's
# shape primitives take arrays of number dtypes only.

def _is_keys(x: Any) -> bool:
    return isinstance(getattr(x, "dtype", None), KeyTy)


def _on_key_data(keys: Any, fn: Any) -> Any:
    """Keys whose data (leading axes only: the key's own axes trail) went through `fn`."""
    return random_wrap_p.bind(fn(random_unwrap_p.bind(keys)), impl=keys.dtype._impl)


def bdim_at_front(x: Any, dim: int | None, size: int) -> Any:
    """batching.bdim_at_front, for key arrays too."""
    if not _is_keys(x):
        return batching.bdim_at_front(x, dim, size)
    if dim == 0:
        return x
    return _on_key_data(x, lambda data: batching.bdim_at_front(data, dim, size))


def _expand_dims(x: Any, dims: Sequence[int]) -> Any:
    from pyjax._src.primitives.shape import expand_dims
    if not _is_keys(x):
        return expand_dims(x, dims)
    return _on_key_data(x, lambda data: expand_dims(data, dims))


for _prim in (random_seed_p, random_split_p, random_bits_p, random_unwrap_p, random_clone_p):
    batching.defvectorized(_prim)
random_fold_in_p.batch = broadcasting_batcher(random_fold_in_p, bdim_at_front, _expand_dims)
del _prim


# ---------------------------------------------------------------------------------------------
# Wrappers
# ---------------------------------------------------------------------------------------------

def random_seed(seeds: Any, impl: PRNGImpl) -> Any:
    """Keys from integer seeds (one key per seed)."""
    return random_seed_p.bind(seeds, impl=impl)


def random_split(keys: Any, shape: tuple[int, ...]) -> Any:
    """Each key split into an array of `shape` new keys (appended axes)."""
    return random_split_p.bind(keys, shape=tuple(shape), impl=keys.dtype._impl)


def random_fold_in(keys: Any, msgs: Any) -> Any:
    """Keys with uint32 data folded in (broadcast together)."""
    return random_fold_in_p.bind(keys, msgs, impl=keys.dtype._impl)


def random_bits(keys: Any, bit_width: int, shape: tuple[int, ...]) -> Any:
    """Unsigned random bits of `bit_width`, of shape keys.shape + shape."""
    return random_bits_p.bind(keys, bit_width=int(bit_width), shape=tuple(shape),
                              impl=keys.dtype._impl)


def random_wrap(base: Any, *, impl: PRNGImpl) -> Any:
    """A key array over uint32 key data (trailing axes: the impl's key shape)."""
    check_key_data(impl, base)
    return random_wrap_p.bind(base, impl=impl)


def random_unwrap(keys: Any) -> Any:
    """The uint32 key data of a key array."""
    if not isinstance(keys.dtype, KeyTy):
        raise TypeError(f"random_unwrap takes key array operand, got keys.dtype={keys.dtype}")
    return random_unwrap_p.bind(keys)


def random_clone(keys: Any) -> Any:
    """The same keys (a fresh value for key-reuse checking)."""
    return random_clone_p.bind(keys)
