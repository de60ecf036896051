"""The eager fast path of `uniform` and `normal`: one concrete key, outside any trace.

Traced, both samplers stage JAX's `jit[name=_uniform]` / `jit[name=_normal]` equations; called
eagerly they used to run that jit's compiled executable, whose dispatch (argument flattening,
cache key, key wrapping, a dozen impl calls) cost ~100 µs on a few elements.  Here the same
numbers come from native sample kernels (backend/tier1/threefry.py `sample`): the hash of
counter i under the key, reduced to the word `random_bits` draws and then, by the jaxpr's own
exact steps (shift, or with 1.0's bits, bitcast, minus 1), to `_uniform`'s floats in [0, 1);
for float32 `normal` all the way to sqrt(2) erf_inv(u) (the native erf_inv kernel's code, used
only while that kernel also serves the impl).  Until a kernel has compiled, or with tier 1 off,
the bits come from `threefry_random_bits` and the steps are NumPy's.  The rest calls the very
impls (or their ufuncs) the executable runs on its optimised jaxpr (backend/simplify.py
contracts the scale-and-shift into a fused multiply-add for float32 and float64), with
subnormals flushed and NumPy's floating-point errors off as there: bit for bit the jit path's
numbers.  Steps that provably change nothing are left out: with the default bounds [0, 1) the
scale-and-shift and the `max` (u * 1 + 0 = u >= 0); in `normal`, whose bounds are
[nextafter(-1, 0), 1), the multiply-add by 1 - lo, which rounds to exactly 2.0 in every float
dtype (an exact product: one rounding either way), becomes a multiply then an add, and the
`max` with lo goes (2u >= 0, so 2u + lo >= lo).

Anything else answers None and the caller takes the jit path, which also raises every error and
warning: other PRNGs, batched keys or key data that is not uint32[2], minval/maxval that are
not concrete numbers (or whose shapes the sample shape does not contain), dtypes other than
float16/bfloat16/float32/float64, shapes that are not tuples or lists of ints, samples that
need NumPy arithmetic and exceed `MAX_SIZE`, `disable_jit`, `no_execution`, a mesh in context,
`jax_threefry_partitionable` off, and a dtype that warns (float64 with x64 off).
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from pyjax._src import caches
from pyjax._src.backend.dispatch import _MEMORY_BYTES, to_buffer
from pyjax._src.backend.machine_code import data_pointer
from pyjax._src.backend.fp_mode import KEPT, SWITCHED, flush_off, flush_on
from pyjax._src.backend.simplify import _FMA_DTYPES
from pyjax._src.backend.tier1 import threefry as native
from pyjax._src.config import config, config_global, config_local
from pyjax._src.core import dtypes
from pyjax._src.core.array import ArrayImpl
from pyjax._src.parallel.mesh import context_key as mesh_context_key
from pyjax._src.primitives import elementwise as el
from pyjax._src.primitives import xla_math
from pyjax._src.primitives._fp import ignore_fp_errors
from pyjax._src.random.keys import PRNGKeyArray
from pyjax._src.random.threefry import threefry_prng_impl, threefry_random_bits

#: samples of more elements made with NumPy arithmetic take the jit path: its fused native
#: kernels (tier 1) beat a NumPy pass per operation there
MAX_SIZE = 1 << 16
_U32 = np.dtype(np.uint32)
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_FLOATS = (np.dtype(np.float16), dtypes.bfloat16, _F32, _F64)
_UINTS = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: np.dtype(np.uint64)}
_UNIT = {_F32: ("unit", "f32"), _F64: ("unit", "f64")}
_NORMAL_F32 = ("normal", "f32")
_CACHE_SIZE = 512
_TWO_POINTERS = native.TWO_POINTERS

#: the bounds `uniform` gets when the caller gives none (identity says "default")
DEFAULT_MIN, DEFAULT_MAX = 0., 1.

_erf_inv_kernels = xla_math.tier1_xla_math._library
_max = el.max_p.impl
_erf_inv = el.erf_inv_p.impl
_convert = el.convert_element_type_p.impl


class _Plan:
    """What one (sampler, shape, dtype, key kind, options) needs per call, worked out once."""

    __slots__ = ("sampler", "shape", "rank", "size", "dtype", "unit_kind", "native_normal",
                 "kernel", "bit_width", "widen", "shift", "one_bits", "one", "fma", "two", "lo",
                 "sqrt2")

    def __init__(self, sampler: str, shape: tuple[int, ...], dtype: np.dtype) -> None:
        finfo = dtypes.finfo(dtype)
        nbits, nmant = finfo.bits, finfo.nmant
        self.sampler = sampler
        self.shape, self.rank, self.size, self.dtype = shape, len(shape), math.prod(shape), dtype
        self.unit_kind = _UNIT.get(dtype)  # None: draw bits, make the floats here
        self.native_normal = sampler == "normal" and dtype == _F32
        self.kernel = None  # the kernel making the whole sample, once it is ready
        self.bit_width = 8 if nmant < 8 else nbits  # as `_uniform` draws them
        uint = _UINTS[nbits]
        self.widen = uint if self.bit_width != nbits else None
        self.shift = np.asarray(self.bit_width - nmant, uint)
        self.one_bits = np.array(1.0, dtype).view(uint)
        self.one = np.asarray(1.0, dtype)
        self.fma = dtype in _FMA_DTYPES
        self.two = np.asarray(2.0, dtype)
        self.lo = np.nextafter(np.array(-1., dtype), np.array(0., dtype), dtype=dtype)
        self.sqrt2 = np.array(np.sqrt(2), dtype)

    def whole_sample_kernel(self) -> Any:
        """The kernel of the whole sample (default-bounds uniform of float32/float64, float32
        normal while the native erf_inv kernel also serves the impl), once compiled."""
        if self.native_normal:
            kernel = native.sample_kernel(_NORMAL_F32)  # (both start compiling on first ask)
            if _erf_inv_kernels.get("erf_inv"):
                self.kernel = kernel
        elif self.sampler == "uniform" and self.unit_kind is not None:
            self.kernel = native.sample_kernel(self.unit_kind)
        return self.kernel


#: plans by (sampler, shape, raw key?, dtype, default bounds?, trace options: `_context()`)
_plans: dict[Any, _Plan | None] = {}
_MISSING = object()
caches.register(_plans.clear)


def _plan(key: tuple, shape: Any, dtype: Any) -> _Plan | None:
    """The plan for `key`, made on first sight (None: this case takes the jit path)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            plan = _build(key[0], shape, dtype, key[2], key[4])
        except Exception:  # noqa: BLE001 - the jit path raises the user's error
            plan = None
    if caught:  # (float64 asked for under x64 off): the jit path warns on every call
        plan = None
    if len(_plans) >= _CACHE_SIZE:
        _plans.clear()
    _plans[key] = plan
    return plan


def _build(sampler: str, shape: Any, dtype: Any, raw_key: bool, defaults: bool
           ) -> _Plan | None:
    from pyjax._src.random.base import canonicalize_shape, float_dtype
    if not config.threefry_partitionable:
        return None
    if raw_key and config.default_prng_impl != threefry_prng_impl.name:
        return None
    shape = canonicalize_shape(shape)
    dtype = float_dtype(sampler, dtype)
    if dtype not in _FLOATS or any(d < 0 for d in shape):
        return None
    size = math.prod(shape)
    # one kernel makes float32 normal and default-bounds float32/float64 uniform at any size
    # (counters: 32 bits); NumPy arithmetic loses to the executable's fused kernels on large
    # samples
    whole = dtype == _F32 if sampler == "normal" else defaults and dtype in _UNIT
    if size > (2 ** 32 if whole else MAX_SIZE) or size * dtype.itemsize > _MEMORY_BYTES:
        return None
    return _Plan(sampler, shape, dtype)


def _lookup(sampler: str, key: Any, shape: Any, dtype: Any, defaults: bool = True
            ) -> tuple[_Plan, np.ndarray] | None:
    """(plan, the key's uint32[2] data, C-contiguous) when this call can take the fast path:
    one threefry key (raw or typed), a tuple (or list) shape of ints, jitted code running."""
    t = type(key)
    if t is ArrayImpl:
        data = key._buf
        if data.dtype != _U32:
            return None
    elif t is PRNGKeyArray and key._impl is threefry_prng_impl:
        data = key._buf
    else:
        return None
    if data.shape != (2,):
        return None
    if type(shape) is not tuple:
        if type(shape) is not list:
            return None
        shape = tuple(shape)
    if data.strides != _CONTIGUOUS_PAIR:
        data = np.ascontiguousarray(data)
    for d in shape:
        if type(d) is not int:
            return None
    context = _context()
    if context is None:
        return None
    cache_key = (sampler, shape, t is ArrayImpl, dtype, defaults, context)
    try:
        plan = _plans.get(cache_key, _MISSING)
    except TypeError:  # an unhashable dtype
        return None
    if plan is _MISSING:
        plan = _plan(cache_key, shape, dtype)
    return None if plan is None else (plan, data)


#: the strides of a C-contiguous uint32[2]
_CONTIGUOUS_PAIR = (4,)


def _context() -> Any:
    """The trace options as plans are keyed by them (`config.global_trace_number` when this
    thread overrides none: no tuple to hash), or None when jitted code would not run here
    (`disable_jit`, `no_execution`, a mesh in context).  The process-wide options are read
    from their store: two property reads cost a 10-element sample a tenth of its time."""
    if config_local.values:
        if config.disable_jit or config.no_execution:
            return None
        context = config.trace_key()
    elif config_global["disable_jit"] or config_global["no_execution"]:
        return None
    else:
        context = config.global_trace_number
    return None if mesh_context_key() else context


def _whole(plan: _Plan, data: np.ndarray) -> np.ndarray | None:
    """The sample from its one kernel, or None while that is not compiled."""
    fn = plan.kernel or plan.whole_sample_kernel()
    if fn is None:
        return None
    out = np.empty(plan.shape, plan.dtype)
    fn(1, plan.size, _TWO_POINTERS(data_pointer(data), data_pointer(out)))
    return out


def _unit(plan: _Plan, data: np.ndarray) -> np.ndarray | None:
    """`_uniform`'s floats before its bounds: in [0, 1), flat."""
    if plan.unit_kind is not None:
        floats = native.sample(data, plan.unit_kind, plan.size)
        if floats is not None:
            return floats
    # the random-bits kernel once compiled, else the NumPy hash
    bits = threefry_random_bits(data, plan.bit_width, (plan.size,))
    if plan.widen is not None:
        bits = bits.astype(plan.widen)
    np.right_shift(bits, plan.shift, out=bits)
    np.bitwise_or(bits, plan.one_bits, out=bits)
    floats = bits.view(plan.dtype)
    return np.subtract(floats, plan.one, out=floats)


# ---------------------------------------------------------------------------------------------
# normal
# ---------------------------------------------------------------------------------------------

def normal(key: Any, shape: Any, dtype: Any) -> Any:
    """`normal(key, shape, dtype)` for a real dtype, computed here; None: take the jit path."""
    found = _lookup("normal", key, shape, dtype)
    if found is None:
        return None
    plan, data = found
    if flush_on(KEPT) is SWITCHED:  # computed as the executable computes (fp_mode)
        try:
            out = _normal(plan, data)
        finally:
            flush_off()
    else:
        out = _normal(plan, data)
    return ArrayImpl(out, False)


def _normal(plan: _Plan, data: np.ndarray) -> np.ndarray:
    """sqrt(2) erf_inv(2 u + lo) of the unit floats u (see the module's docstring)."""
    if plan.native_normal:
        out = _whole(plan, data)
        if out is not None:
            return out
    u = _unit(plan, data)
    with ignore_fp_errors():
        np.multiply(u, plan.two, out=u)
        np.add(u, plan.lo, out=u)
        y = np.asarray(_erf_inv(u))
        return np.multiply(plan.sqrt2, y, out=y).reshape(plan.shape)


# ---------------------------------------------------------------------------------------------
# uniform
# ---------------------------------------------------------------------------------------------

def uniform(key: Any, shape: Any, dtype: Any, minval: Any, maxval: Any) -> Any:
    """`uniform(key, shape, dtype, minval, maxval)` computed here; None: take the jit path."""
    defaults = minval is DEFAULT_MIN and maxval is DEFAULT_MAX
    found = _lookup("uniform", key, shape, dtype, defaults)
    if found is None:
        return None
    plan, data = found
    if defaults:
        lo = hi = None
    else:
        try:
            lo, hi = _bound(minval, plan), _bound(maxval, plan)
        except Exception:  # noqa: BLE001 - the jit path raises the user's error
            return None
        if lo is None or hi is None:
            return None
    out = _whole(plan, data) if defaults and plan.unit_kind is not None else None
    if out is None:  # (the kernel's floats are exact: no subnormals to flush)
        if flush_on(KEPT) is SWITCHED:
            try:
                out = _uniform(plan, data, lo, hi)
            finally:
                flush_off()
        else:
            out = _uniform(plan, data, lo, hi)
    return ArrayImpl(out, False)


def _bound(value: Any, plan: _Plan) -> np.ndarray | None:
    """minval or maxval as `_uniform`'s body has it after conversion and broadcast_to_rank;
    None where the jit path should decide (tracers, shapes the sample does not contain...)."""
    t = type(value)
    if t is ArrayImpl or t is float or t is int or isinstance(value, (np.ndarray, np.generic)):
        buf = to_buffer(value)[0]
    else:
        return None
    if buf.dtype != plan.dtype:
        if buf.dtype.kind not in "biuf":
            return None
        buf = _convert(buf, new_dtype=plan.dtype, weak_type=False)
    shape = buf.shape
    if len(shape) > plan.rank:
        return None
    lead = plan.rank - len(shape)
    for d, n in zip(shape, plan.shape[lead:]):
        if d != n and d != 1:
            return None
    return buf.reshape((1,) * lead + shape)


def _uniform(plan: _Plan, data: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None
             ) -> np.ndarray:
    """`_uniform`'s optimised jaxpr: unit floats scaled (a fused multiply-add for float32 and
    float64, a multiply then an add otherwise) and shifted, then at least minval."""
    floats = _unit(plan, data).reshape(plan.shape)
    if lo is None:  # [0, 1): floats * 1 + 0 and max(0, .) are the floats themselves
        return floats
    with ignore_fp_errors():
        scale = np.subtract(hi, lo)
        if not plan.fma:
            out = np.add(np.multiply(floats, scale), lo)
        elif plan.dtype == _F32:  # simplify's fused_multiply_add impl: through float64, where
            # float32 operands made float64 first are the same numbers (and faster to mix)
            out = xla_math._fma(floats, scale.astype(_F64), lo.astype(_F64))
        else:
            out = xla_math.fma_f64(floats, scale, lo)
        return np.asarray(_max(lo, out), plan.dtype)  # (of the sample's shape: see _bound)
