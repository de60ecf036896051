"""The op table: one `OpCase` per primitive (and per notable parameterisation).

Each entry says how to call the primitive through its lax function, how to draw arguments
(shapes, dtypes, value ranges), what NumPy computes for it (on float64/complex128 copies, cast
back to the result dtype; integers are computed exactly), how close the answer must be, and what
the autodiff issue needs to know (differentiable? linear in which operands?).

`tests/test_op_table.py` runs every entry eagerly and under jit; `rule_census()` there reads
`linear` to decide which primitives need a transpose rule.  New primitives must get an entry
here (the census test fails otherwise).

Conventions
  fn(*arrays)            the call; static parameters are baked into the lambda.  Nullary
                         entries with `pass_dtype` are called as fn(dtype=...).
  ref(*np_arrays)        NumPy reference.  Float inputs arrive as float64, complex as
                         complex128 (unless `native_ref`), integer and bool inputs unchanged.
  dtypes                 every dtype the entry is run with; for entries marked `exact_dtypes`
                         every other dtype must be rejected with TypeError (as JAX does),
                         or only those in `rejects` when it is given.
  arg_dtypes             per operand: None = the entry's dtype, or a fixed dtype name.
  shapes                 tuples of operand shapes; each is run.
  doms                   value domains (one Dom for all operands, or one per operand).
  weak                   "all": result weak iff every operand in `weak_args` is weak;
                         "never": result is never weak; "each": output i is weak iff
                         operand i is (sort).
  multiple               the primitive has several results (fn and ref return sequences).
  linear                 operands the primitive is linear in (others held constant): these
                         need a transpose rule (issue 4).
  differentiable         has a float JVP worth checking numerically on this domain (issue 4).
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
import zlib
from typing import Any, Callable, Iterator, Sequence

import ml_dtypes
import numpy as np
import scipy.special as sps

import pyjax
from pyjax import lax
from pyjax._src.core.primitive import registry
from pyjax._src.lazy_loader import load_deferred

# `import pyjax` leaves the less common primitive families to first use (issue 16); the table's
# cases below are keyed on the registry and the census covers every family, so load them all.
load_deferred()

# ---------------------------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------------------------

DTYPES: dict[str, np.dtype] = {
    "bool": np.dtype(np.bool_),
    "int8": np.dtype(np.int8), "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32), "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8), "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32), "uint64": np.dtype(np.uint64),
    "float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float32": np.dtype(np.float32), "float64": np.dtype(np.float64),
    "complex64": np.dtype(np.complex64), "complex128": np.dtype(np.complex128),
}
ALL = tuple(DTYPES)
BOOL = ("bool",)
SINT = ("int8", "int16", "int32", "int64")
UINT = ("uint8", "uint16", "uint32", "uint64")
INT = SINT + UINT
FLOAT = ("float16", "bfloat16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
INEXACT = FLOAT + COMPLEX
NUMBER = INT + INEXACT
INTEGRAL = BOOL + INT
ORDERED = BOOL + INT + FLOAT          # everything but complex
#: dtypes that only exist with jax_enable_x64 on (without it they canonicalise to 32 bits)
X64_DTYPES = frozenset({"int64", "uint64", "float64", "complex128"})

#: default (rtol, atol) per result dtype; integer and bool results are compared exactly
TOLERANCE: dict[str, tuple[float, float]] = {
    "float16": (5e-3, 1e-3), "bfloat16": (2e-2, 1e-2),
    "float32": (1e-5, 1e-6), "float64": (1e-12, 1e-14),
    "complex64": (1e-5, 1e-6), "complex128": (1e-12, 1e-14),
}


@contextlib.contextmanager
def x64_mode(enabled: bool) -> Iterator[None]:
    """Run a block with jax_enable_x64 set to `enabled`, restoring the previous value."""
    previous = pyjax.config.x64
    pyjax.config.update("jax_enable_x64", enabled)
    try:
        yield
    finally:
        pyjax.config.update("jax_enable_x64", previous)


# ---------------------------------------------------------------------------------------------
# value domains
# ---------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Dom:
    """Where operand values are drawn from.

    lo, hi      float range (real and imaginary parts of complex values alike)
    ilo, ihi    integer range, clipped to the dtype (None: the dtype's full range)
    specials    mix in nan, +-inf, +-0 (floats) or min, max, 0, -1 (integers)
    big         mix in finite floats far outside every integer range (convert_element_type)
    halves      floats are multiples of 0.5 (rounding ties)
    shift       integers in [-2, bits + 2] (shift amounts)
    nonzero     no zeros
    unique      distinct integers
    complex_specials   False: no specials for complex dtypes (XLA's complex max/min
                differ from NumPy's on NaN)
    """
    lo: float = -3.0
    hi: float = 3.0
    ilo: int | None = -20
    ihi: int | None = 20
    specials: bool = False
    big: bool = False
    halves: bool = False
    shift: bool = False
    nonzero: bool = False
    unique: bool = False
    complex_specials: bool = True


DEFAULT = Dom()
FULL_INT = Dom(ilo=None, ihi=None)             # wrap-around matters: full integer range
SPECIAL = Dom(ilo=None, ihi=None, specials=True)
SPECIAL_REAL = Dom(ilo=None, ihi=None, specials=True, complex_specials=False)
POSITIVE = Dom(lo=0.1, hi=5.0, ilo=1, ihi=20)
UNIT = Dom(lo=-0.95, hi=0.95)                  # |x| < 1: asin, acos, atanh, erf_inv
SMALL = Dom(lo=-2.0, hi=2.0, ilo=-4, ihi=4)    # powers and products without overflow
TINY_INT = Dom(lo=-2.0, hi=2.0, ilo=-3, ihi=3)


def _int_range(dom: Dom, dt: np.dtype) -> tuple[int, int]:
    info = np.iinfo(dt)
    if dom.shift:
        return -2 if info.min < 0 else 0, info.bits + 2
    lo = info.min if dom.ilo is None else max(dom.ilo, info.min)
    hi = info.max if dom.ihi is None else min(dom.ihi, info.max)
    assert lo <= hi, (dom, dt)
    return lo, hi


def draw(rng: np.random.Generator, shape: tuple[int, ...], name: str, dom: Dom) -> np.ndarray:
    """Random operand of `shape` and dtype `name` from domain `dom` (a NumPy array)."""
    dt = DTYPES[name]
    n = math.prod(shape)
    if name == "bool":
        return np.array(rng.random(shape) < 0.5)
    if name in INT:
        lo, hi = _int_range(dom, dt)
        if dom.unique:  # distinct values (scatter indices without collisions)
            return rng.permutation(np.arange(lo, hi + 1))[:n].astype(dt).reshape(shape)
        x = np.array(rng.integers(lo, hi, size=shape, dtype=dt, endpoint=True))
        if dom.specials and n:
            info = np.iinfo(dt)
            pool = np.array([info.min, info.max, 0, 1] + ([-1] if info.min < 0 else []),
                            dtype=object).astype(dt)
            mask = rng.random(shape) < 0.4
            x[mask] = rng.choice(pool, size=int(mask.sum()))
        if dom.nonzero:
            x[x == 0] = 1
        return x
    cplx = name in COMPLEX
    real_dt = np.float64

    def part() -> np.ndarray:
        v = np.array(rng.uniform(dom.lo, dom.hi, size=shape), dtype=real_dt)
        if dom.halves:
            v = np.round(v * 2) / 2
        return v

    x = np.array(part() + 1j * part() if cplx else part())
    if dom.nonzero:
        x[x == 0] = 1
    if (dom.specials and (dom.complex_specials or not cplx) or dom.big) and n:
        pool = []
        if dom.specials:
            pool += [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 2.5, -1.5]
        if dom.big:
            top = float(ml_dtypes.finfo(dt).max) if not cplx else 3e38
            pool += [min(v, top) for v in (1e10, 3e9, 7e4, 4e19, 1e30)]
            pool += [-min(v, top) for v in (1e10, 3e9, 7e4, 4e19, 1e30)]
            pool += [300.7, -129.5, 65535.9, 255.5]
        mask = rng.random(shape) < 0.4
        vals = rng.choice(np.array(pool), size=int(mask.sum()))
        x[mask] = vals
    with np.errstate(all="ignore"):
        return np.asarray(x).astype(dt)


# ---------------------------------------------------------------------------------------------
# the entry type
# ---------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, eq=False)
class OpCase:
    name: str                                  # unique id
    prim: str                                  # primitive expected in the jaxpr
    fn: Callable[..., Any]
    ref: Callable[..., Any]
    dtypes: tuple[str, ...]
    shapes: tuple[tuple[tuple[int, ...], ...], ...]
    doms: Dom | tuple[Dom, ...] = DEFAULT
    arg_dtypes: tuple[str | None, ...] | None = None
    out_dtype: str | Callable[[str], str] | None = None
    native_ref: bool = False
    tol_scale: float = 1.0
    tol: dict[str, tuple[float, float]] | None = None
    weak: str = "all"
    weak_args: tuple[int, ...] | None = None
    differentiable: bool = False
    linear: tuple[int, ...] = ()
    pass_dtype: bool = False
    x64: bool = False
    exact_dtypes: bool = True
    rejects: tuple[str, ...] | None = None
    binds: Callable[[str], bool] | None = None
    multiple: bool = False

    # -- derived ---------------------------------------------------------------------------
    @property
    def nargs(self) -> int:
        return len(self.shapes[0])

    def operand_dtypes(self, dtype: str) -> tuple[str, ...]:
        if self.arg_dtypes is None:
            return (dtype,) * self.nargs
        return tuple(dtype if d is None else d for d in self.arg_dtypes)

    def result_dtype(self, dtype: str) -> Any:
        if self.out_dtype is None:
            return dtype
        if callable(self.out_dtype):
            return self.out_dtype(dtype)
        return self.out_dtype

    def result_dtypes(self, dtype: str, n: int) -> tuple[str, ...]:
        """Dtypes of the `n` results of a multiple-results entry."""
        out = self.result_dtype(dtype)
        return tuple(out) if isinstance(out, tuple) else (out,) * n

    def needs_x64(self, dtype: str) -> bool:
        out = self.result_dtype(dtype)
        names = {*self.operand_dtypes(dtype), *(out if isinstance(out, tuple) else (out,)),
                 dtype}
        return self.x64 or bool(names & X64_DTYPES)

    def dom(self, i: int) -> Dom:
        return self.doms[i] if isinstance(self.doms, tuple) else self.doms

    def tolerance(self, out: str) -> tuple[float, float]:
        if self.tol and out in self.tol:
            return self.tol[out]
        rtol, atol = TOLERANCE.get(out, (0.0, 0.0))
        return rtol * self.tol_scale, atol * self.tol_scale

    def expected_weak(self, weak_flags: Sequence[bool], index: int = 0) -> bool:
        """Weak type of result `index` for operands of the given weak types."""
        if self.weak == "never":
            return False
        if self.weak == "each":
            return weak_flags[index]
        idx = range(len(weak_flags)) if self.weak_args is None else self.weak_args
        return all(weak_flags[i] for i in idx)

    def rejected_dtypes(self) -> tuple[str, ...]:
        """Dtypes the primitive must reject with TypeError (as JAX does)."""
        if self.rejects is not None:
            return self.rejects
        return tuple(d for d in ALL if d not in self.dtypes) if self.exact_dtypes else ()

    def binds_primitive(self, dtype: str) -> bool:
        return True if self.binds is None else self.binds(dtype)

    def __repr__(self) -> str:
        return f"OpCase({self.name})"


def seed_for(*parts: Any) -> int:
    return zlib.crc32(repr(parts).encode())


def make_args(case: OpCase, dtype: str, shapes: tuple[tuple[int, ...], ...],
              salt: int = 0) -> list[np.ndarray]:
    """NumPy operands for one run of `case` (deterministic in case, dtype, shapes, salt)."""
    rng = np.random.default_rng(seed_for(case.name, dtype, shapes, salt))
    return [draw(rng, shape, name, case.dom(i))
            for i, (shape, name) in enumerate(zip(shapes, case.operand_dtypes(dtype)))]


def _wide(x: np.ndarray) -> np.ndarray:
    if x.dtype.name in FLOAT or x.dtype == DTYPES["bfloat16"]:
        return x.astype(np.float64)
    if x.dtype.name in COMPLEX:
        return x.astype(np.complex128)
    return x


def reference(case: OpCase, dtype: str, args: Sequence[np.ndarray]) -> Any:
    """The expected result: `case.ref` on widened copies, cast to the result dtype (a list
    of arrays for multiple-results entries)."""
    wide = [np.array(a) if case.native_ref else _wide(np.array(a)) for a in args]
    kwargs = {"dtype": dtype} if case.pass_dtype else {}
    with np.errstate(all="ignore"):
        out = case.ref(*wide, **kwargs)
        if case.multiple:
            names = case.result_dtypes(dtype, len(out))
            return [np.asarray(o).astype(DTYPES[n]) for o, n in zip(out, names)]
        return np.asarray(out).astype(DTYPES[case.result_dtype(dtype)])


# ---------------------------------------------------------------------------------------------
# exact integer references (Python ints: XLA's wrap-around, division and shift semantics)
# ---------------------------------------------------------------------------------------------

def wrap_int(v: int, dt: np.dtype) -> int:
    info = np.iinfo(dt)
    v &= (1 << info.bits) - 1
    if info.min < 0 and v >= 1 << (info.bits - 1):
        v -= 1 << info.bits
    return v


def pyelementwise(f: Callable[..., Any], out_dtype: Any, *arrays: np.ndarray) -> np.ndarray:
    """Apply a scalar Python function elementwise (with NumPy broadcasting)."""
    b = np.broadcast_arrays(*arrays)
    flat = [a.ravel().tolist() for a in b]
    out = [f(*vals) for vals in zip(*flat)]
    return np.array(out, dtype=object).astype(out_dtype).reshape(b[0].shape) if out else \
        np.zeros(b[0].shape, out_dtype)


def _int_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    dt = x.dtype

    def f(a: int, b: int) -> int:
        if b == 0:
            return wrap_int(-1, dt)
        q = abs(a) // abs(b)
        return wrap_int(q if (a < 0) == (b < 0) else -q, dt)
    return pyelementwise(f, dt, x, y)


def _int_rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    dt = x.dtype

    def f(a: int, b: int) -> int:
        if b == 0:
            return a
        r = abs(a) % abs(b)
        return wrap_int(-r if a < 0 else r, dt)
    return pyelementwise(f, dt, x, y)


def _ref_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _int_div(x, y) if x.dtype.name in INT else x / y


def _ref_rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _int_rem(x, y) if x.dtype.name in INT else np.fmod(x, y)


def _shift(kind: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def ref(x: np.ndarray, s: np.ndarray) -> np.ndarray:
        dt = x.dtype
        bits = np.iinfo(dt).bits
        mask = (1 << bits) - 1

        def f(a: int, n: int) -> int:
            ok = 0 <= n < bits
            if kind == "left":
                return wrap_int(a << n, dt) if ok else 0
            if kind == "logical":
                return wrap_int((a & mask) >> n, dt) if ok else 0
            signed = wrap_int(a & mask, np.dtype(f"int{bits}"))  # the bits read as signed
            return wrap_int(signed >> n if ok else (-1 if signed < 0 else 0), dt)
        return pyelementwise(f, dt, x, s)
    return ref


def _population_count(x: np.ndarray) -> np.ndarray:
    mask = (1 << np.iinfo(x.dtype).bits) - 1
    return pyelementwise(lambda a: bin(a & mask).count("1"), x.dtype, x)


def _clz(x: np.ndarray) -> np.ndarray:
    bits = np.iinfo(x.dtype).bits
    return pyelementwise(lambda a: bits - (a & ((1 << bits) - 1)).bit_length(), x.dtype, x)


def _integer_pow(y: int) -> Callable[[np.ndarray], np.ndarray]:
    def ref(x: np.ndarray) -> np.ndarray:
        if x.dtype.name in INT:
            return pyelementwise(lambda a: wrap_int(a ** y, x.dtype), x.dtype, x)
        return x ** y if y >= 0 else 1 / x ** (-y)
    return ref


def _sign(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "c":
        mag = np.abs(x)
        return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag))
    return np.sign(x)


def _round_away(x: np.ndarray) -> np.ndarray:
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def _convert(dst: str) -> Callable[[np.ndarray], np.ndarray]:
    """XLA's convert: complex drops the imaginary part, float->int truncates toward zero and
    saturates, NaN -> 0, float -> bool is x != 0 (NaN -> True), int -> int wraps."""
    dd = DTYPES[dst]

    def ref(x: np.ndarray) -> np.ndarray:
        if x.dtype.kind == "c" and dd.kind != "c":
            x = np.real(x)
        if dst == "bool":
            return x != 0
        src_inexact = x.dtype.kind in "fcV" or x.dtype == DTYPES["bfloat16"]
        if dst in INT:
            info = np.iinfo(dd)
            if src_inexact:
                def f(v: float) -> int:
                    if math.isnan(v):
                        return 0
                    if math.isinf(v):
                        return info.max if v > 0 else info.min
                    return min(max(math.trunc(v), info.min), info.max)
                return pyelementwise(f, dd, x.astype(np.float64))
            return pyelementwise(lambda v: wrap_int(int(v), dd), dd, x)
        if not src_inexact:  # int / bool -> float or complex: exact ints rounded once
            return pyelementwise(float, np.float64, x).astype(dd)
        return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64).astype(dd)
    return ref


def _reduce(np_fn: Callable, axes: tuple[int, ...] | None, identity: Callable | None = None
            ) -> Callable[[np.ndarray], np.ndarray]:
    def ref(x: np.ndarray) -> np.ndarray:
        ax = tuple(range(x.ndim)) if axes is None else axes
        if identity is None:
            return np_fn(x, axis=ax)
        return np_fn(x, axis=ax, initial=identity(x.dtype))
    return ref


def _lowest(dt: np.dtype) -> Any:
    if dt == np.bool_:
        return False
    return np.iinfo(dt).min if dt.kind in "iu" else -np.inf


def _highest(dt: np.dtype) -> Any:
    if dt == np.bool_:
        return True
    return np.iinfo(dt).max if dt.kind in "iu" else np.inf


def _all_ones(dt: np.dtype) -> Any:
    return True if dt == np.bool_ else np.array(-1).astype(dt)


def _int_sum(x: np.ndarray, axis: tuple) -> np.ndarray:
    return np.sum(x, axis=axis, dtype=x.dtype) if x.dtype.kind in "iu" else np.sum(x, axis=axis)


def _int_prod(x: np.ndarray, axis: tuple) -> np.ndarray:
    return np.prod(x, axis=axis, dtype=x.dtype) if x.dtype.kind in "iu" else np.prod(x, axis=axis)


def _pad_ref(x: np.ndarray, v: np.ndarray, config: tuple) -> np.ndarray:
    """Index-mapping definition of lax.pad: output p holds x[i] where p = lo + i*(interior+1)."""
    out_shape, src_pos, dst_pos = [], [], []
    for n, (lo, hi, interior) in zip(x.shape, config):
        size = lo + hi + n + max(n - 1, 0) * interior
        out_shape.append(size)
        pos = [(i, lo + i * (interior + 1)) for i in range(n)]
        pos = [(i, p) for i, p in pos if 0 <= p < size]
        src_pos.append([i for i, _ in pos])
        dst_pos.append([p for _, p in pos])
    out = np.full(out_shape, v, dtype=x.dtype)
    if all(src_pos) or not x.ndim:
        out[np.ix_(*dst_pos)] = x[np.ix_(*src_pos)]
    return out


def _einsum_ref(dims: Any) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    (lc, rc), (lb, rb) = dims

    def ref(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        letters = iter("abcdefghijklmnopqrstuvwxyz")
        ls = [next(letters) for _ in range(x.ndim)]
        rs = [next(letters) for _ in range(y.ndim)]
        for a, b in zip(lc, rc):
            rs[b] = ls[a]
        for a, b in zip(lb, rb):
            rs[b] = ls[a]
        out = [ls[i] for i in lb]
        out += [ls[i] for i in range(x.ndim) if i not in lc and i not in lb]
        out += [rs[i] for i in range(y.ndim) if i not in rc and i not in rb]
        if x.dtype.kind in "iub":
            x, y = x.astype(np.int64), y.astype(np.int64)
        return np.einsum(f"{''.join(ls)},{''.join(rs)}->{''.join(out)}", x, y)
    return ref


# ---------------------------------------------------------------------------------------------
# constructors
# ---------------------------------------------------------------------------------------------

UNARY_SHAPES = (((),), ((0,),), ((5,),), ((2, 3),))
BINARY_SHAPES = (((), ()), ((0,), (0,)), ((2, 3), (2, 3)), ((2, 3), ()), ((1, 3), (2, 3)))

OPS: list[OpCase] = []


def add(case: OpCase) -> OpCase:
    assert case.name not in {c.name for c in OPS}, case.name
    OPS.append(case)
    return case


def unary(prim: str, fn: Callable, ref: Callable, dtypes: tuple, *, name: str | None = None,
          shapes: tuple = UNARY_SHAPES, **kw: Any) -> OpCase:
    return add(OpCase(name or prim, prim, fn, ref, dtypes, shapes, **kw))


def binary(prim: str, fn: Callable, ref: Callable, dtypes: tuple, *, name: str | None = None,
           shapes: tuple = BINARY_SHAPES, **kw: Any) -> OpCase:
    return add(OpCase(name or prim, prim, fn, ref, dtypes, shapes, **kw))


def bind(prim_name: str, *args: Any, **params: Any) -> Any:
    """Bind a primitive that has no lax wrapper (stack, tile)."""
    return registry[prim_name].bind(*args, **params)


def _complex_only(dtype: str) -> str:
    return {"float16": "complex64", "bfloat16": "complex64", "float32": "complex64",
            "float64": "complex128"}.get(dtype, dtype)


def _real_of(dtype: str) -> str:
    return {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)


# ---------------------------------------------------------------------------------------------
# elementwise unary
# ---------------------------------------------------------------------------------------------

unary("neg", lax.neg, np.negative, NUMBER, doms=FULL_INT, differentiable=True, linear=(0,))
unary("sign", lax.sign, _sign, NUMBER, doms=SPECIAL, differentiable=True)
unary("floor", lax.floor, np.floor, FLOAT, doms=Dom(halves=True, specials=True),
      differentiable=True)
unary("ceil", lax.ceil, np.ceil, FLOAT, doms=Dom(halves=True, specials=True),
      differentiable=True)
unary("round", lambda x: lax.round(x, 0), _round_away, FLOAT, name="round_away_from_zero",
      doms=Dom(halves=True, specials=True), differentiable=True)
unary("round", lambda x: lax.round(x, 1), np.round, FLOAT, name="round_to_nearest_even",
      doms=Dom(halves=True, specials=True), differentiable=True)
unary("is_finite", lax.is_finite, np.isfinite, FLOAT, doms=SPECIAL, out_dtype="bool")
unary("exp", lax.exp, np.exp, INEXACT, differentiable=True)
unary("exp2", lax.exp2, np.exp2, INEXACT, differentiable=True)
unary("log", lax.log, np.log, INEXACT, doms=POSITIVE, differentiable=True)
unary("log1p", lax.log1p, np.log1p, INEXACT, doms=Dom(lo=-0.9, hi=4.0), differentiable=True)
unary("expm1", lax.expm1, np.expm1, INEXACT, differentiable=True)
unary("tanh", lax.tanh, np.tanh, INEXACT, differentiable=True)
unary("logistic", lax.logistic, lambda x: 1 / (1 + np.exp(-x)), INEXACT, differentiable=True)
unary("sin", lax.sin, np.sin, INEXACT, differentiable=True)
unary("cos", lax.cos, np.cos, INEXACT, differentiable=True)
unary("tan", lax.tan, np.tan, INEXACT, doms=Dom(lo=-1.2, hi=1.2), differentiable=True)
unary("asin", lax.asin, np.arcsin, INEXACT, doms=UNIT, differentiable=True)
unary("acos", lax.acos, np.arccos, INEXACT, doms=UNIT, differentiable=True)
unary("atan", lax.atan, np.arctan, INEXACT, differentiable=True)
unary("sinh", lax.sinh, np.sinh, INEXACT, differentiable=True)
unary("cosh", lax.cosh, np.cosh, INEXACT, differentiable=True)
unary("asinh", lax.asinh, np.arcsinh, INEXACT, differentiable=True)
unary("acosh", lax.acosh, np.arccosh, INEXACT, doms=Dom(lo=1.05, hi=5.0), differentiable=True)
unary("atanh", lax.atanh, np.arctanh, INEXACT, doms=UNIT, differentiable=True)
unary("sqrt", lax.sqrt, np.sqrt, INEXACT, doms=POSITIVE, differentiable=True)
unary("rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x), INEXACT, doms=POSITIVE,
      differentiable=True)
unary("cbrt", lax.cbrt, np.cbrt, FLOAT, differentiable=True)
unary("abs", lax.abs, np.abs, SINT + INEXACT, doms=FULL_INT, out_dtype=_real_of,
      differentiable=True)
unary("not", lax.bitwise_not, np.invert, INTEGRAL, doms=FULL_INT)
unary("square", lax.square, np.square, NUMBER, doms=SMALL, differentiable=True)
unary("erf", lax.erf, sps.erf, FLOAT, differentiable=True)
unary("erfc", lax.erfc, sps.erfc, FLOAT, differentiable=True)
unary("erf_inv", lax.erf_inv, sps.erfinv, FLOAT, doms=UNIT, differentiable=True)
unary("lgamma", lax.lgamma, sps.gammaln, FLOAT, doms=Dom(lo=0.2, hi=6.0), differentiable=True)
unary("digamma", lax.digamma, sps.digamma, FLOAT, doms=Dom(lo=0.3, hi=6.0),
      differentiable=True, tol={"float32": (1e-4, 1e-5)})
unary("real", lax.real, np.real, COMPLEX, out_dtype=_real_of, differentiable=True,
      linear=(0,))
unary("imag", lax.imag, np.imag, COMPLEX, out_dtype=_real_of, differentiable=True,
      linear=(0,))
unary("conj", lax.conj, np.conj, ("float32", "float64") + COMPLEX, out_dtype=_complex_only, differentiable=True,
      linear=(0,))
unary("population_count", lax.population_count, _population_count, INT, doms=SPECIAL)
unary("clz", lax.clz, _clz, INT, doms=SPECIAL)

for _y in (0, 1, 2, 3):
    unary("integer_pow", (lambda y: lambda x: lax.integer_pow(x, y))(_y), _integer_pow(_y),
          NUMBER, name=f"integer_pow_{_y}", doms=SMALL, differentiable=True)
for _y in (-1, -2):
    unary("integer_pow", (lambda y: lambda x: lax.integer_pow(x, y))(_y), _integer_pow(_y),
          INEXACT, name=f"integer_pow_neg{-_y}", doms=Dom(lo=0.5, hi=3.0),
          differentiable=True)

# ---------------------------------------------------------------------------------------------
# elementwise binary
# ---------------------------------------------------------------------------------------------

binary("add", lax.add, np.add, NUMBER, doms=FULL_INT, differentiable=True, linear=(0, 1))
binary("add_any", lambda x, y: bind("add_any", x, y), np.add, NUMBER, doms=FULL_INT,
       shapes=(((), ()), ((0,), (0,)), ((2, 3), (2, 3))), differentiable=True, linear=(0, 1))
binary("sub", lax.sub, np.subtract, NUMBER, doms=FULL_INT, differentiable=True, linear=(0, 1))
binary("mul", lax.mul, np.multiply, NUMBER, doms=FULL_INT, differentiable=True, linear=(0, 1))
binary("div", lax.div, _ref_div, INT + FLOAT,
       doms=(SPECIAL, Dom(ilo=None, ihi=None, specials=True, lo=0.5, hi=3.0)),
       differentiable=True, linear=(0,), rejects=BOOL)
binary("div", lax.div, _ref_div, COMPLEX, name="div_complex",  # complex x/0 is ill-defined
       doms=(DEFAULT, Dom(lo=0.5, hi=3.0)), differentiable=True, linear=(0,), rejects=BOOL)
binary("rem", lax.rem, _ref_rem, INT + FLOAT,
       doms=(SPECIAL, Dom(ilo=None, ihi=None, specials=True, lo=0.5, hi=3.0)),
       differentiable=True)
binary("pow", lax.pow, np.power, INEXACT, doms=(Dom(lo=0.2, hi=3.0), Dom(lo=-2.0, hi=2.0)),
       differentiable=True)
binary("pow", lax.pow, lambda x, y: x ** y.astype(np.float64), INEXACT,
       name="pow_int_exponent", arg_dtypes=(None, "int32"),
       doms=(Dom(lo=-2.0, hi=2.0), Dom(ilo=-3, ihi=4)), weak_args=(0, 1), differentiable=True)
binary("max", lax.max, np.maximum, ALL, doms=SPECIAL, differentiable=True)

binary("min", lax.min, np.minimum, ALL, doms=SPECIAL, differentiable=True)
binary("atan2", lax.atan2, lambda y, x: np.arctan2(y, x) if y.dtype.kind == "f" else
       -1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y)), INEXACT, doms=Dom(nonzero=True),
       differentiable=True)
binary("polygamma", lambda m, x: bind("polygamma", m, x),
       lambda m, x: np.where(m == np.floor(m), sps.polygamma(np.floor(m).astype(np.int64), x),
                             np.nan),
       FLOAT, doms=(Dom(lo=0.0, hi=3.0, halves=True), Dom(lo=0.3, hi=6.0)),
       tol={"float32": (1e-4, 1e-5)})  # differentiable in x only (tests/test_autodiff_rules.py)
binary("nextafter", lax.nextafter, np.nextafter, FLOAT, doms=SPECIAL, native_ref=True)
binary("and", lax.bitwise_and, np.bitwise_and, INTEGRAL, doms=FULL_INT)
binary("or", lax.bitwise_or, np.bitwise_or, INTEGRAL, doms=FULL_INT)
binary("xor", lax.bitwise_xor, np.bitwise_xor, INTEGRAL, doms=FULL_INT)
binary("shift_left", lax.shift_left, _shift("left"), INT, doms=(FULL_INT, Dom(shift=True)))
binary("shift_right_arithmetic", lax.shift_right_arithmetic, _shift("arithmetic"), INT,
       doms=(FULL_INT, Dom(shift=True)))
binary("shift_right_logical", lax.shift_right_logical, _shift("logical"), INT,
       doms=(FULL_INT, Dom(shift=True)))
for _name, _fn, _ref, _dts in (
        ("eq", lax.eq, np.equal, ALL), ("ne", lax.ne, np.not_equal, ALL),
        ("lt", lax.lt, np.less, ORDERED), ("le", lax.le, np.less_equal, ORDERED),
        ("gt", lax.gt, np.greater, ORDERED), ("ge", lax.ge, np.greater_equal, ORDERED)):
    binary(_name, _fn, _ref, _dts, doms=Dom(ilo=-2, ihi=2, lo=-1.0, hi=1.0, halves=True,
                                           specials=True), out_dtype="bool")


# -- total-order comparisons (pyjax/_src/primitives/total_order.py; jnp.searchsorted) --------
def _total_order_key(x: np.ndarray) -> np.ndarray:
    """-NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN as int64 (sign-magnitude bits)."""
    if x.dtype.kind != "f":
        return x
    bits = x.astype(np.float64).view(np.int64)
    magnitude = bits & np.int64(2 ** 63 - 1)
    return np.where(bits < 0, -magnitude - 1, magnitude)


def _total_order_ref(compare: Callable) -> Callable:
    def ref(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if x.dtype.kind == "c":
            return ((_total_order_key(x.real) == _total_order_key(y.real))
                    & (_total_order_key(x.imag) == _total_order_key(y.imag)))
        return compare(_total_order_key(x), _total_order_key(y))
    return ref


for _name, _ref, _dts in (("eq_to", np.equal, ALL), ("le_to", np.less_equal, ORDERED),
                          ("lt_to", np.less, ORDERED)):
    binary(_name, lambda x, y, _n=_name: bind(_n, x, y), _total_order_ref(_ref), _dts,
           doms=Dom(ilo=-2, ihi=2, lo=-1.0, hi=1.0, halves=True, specials=True),
           out_dtype="bool")
binary("complex", lax.complex, lambda x, y: x + 1j * y, ("float32", "float64"),
       out_dtype=_complex_only, differentiable=True, linear=(0, 1))

# -- special functions and small elementwise ops (pyjax/_src/primitives/special.py) ----------
# XLA's algorithms (kept by pyjax) are less accurate than SciPy's float64: float32 tolerances
# are the measured JAX-vs-SciPy errors; tests/test_lax_special.py compares with JAX itself.
_SPECIAL_TOL = {"float32": (2e-4, 1e-6), "float64": (1e-9, 1e-14)}


def _igamma_grad_a_ref(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    h = 1e-6 * np.maximum(a, 1.0)
    return (sps.gammainc(a + h, x) - sps.gammainc(a - h, x)) / (2 * h)


def _mulhi_ref(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    return pyelementwise(lambda a, b: wrap_int((a * b) >> bits, x.dtype), x.dtype, x, y)


def _reduce_precision_ref(target: Any) -> Callable[[np.ndarray], np.ndarray]:
    """Round through a real narrower format (the values drawn stay in its normal range)."""
    return lambda x: x.astype(target).astype(np.float64)


_GAMMA_DOMS = (Dom(lo=0.5, hi=5.0), Dom(lo=0.1, hi=6.0))
binary("igamma", lax.igamma, sps.gammainc, FLOAT, doms=_GAMMA_DOMS, tol=_SPECIAL_TOL)
binary("igammac", lax.igammac, sps.gammaincc, FLOAT, doms=_GAMMA_DOMS, tol=_SPECIAL_TOL)
binary("igamma_grad_a", lax.igamma_grad_a, _igamma_grad_a_ref, FLOAT, doms=_GAMMA_DOMS,
       tol={"float32": (2e-4, 1e-5), "float64": (1e-6, 1e-8)})
binary("zeta", lax.zeta, sps.zeta, FLOAT, doms=(Dom(lo=1.5, hi=6.0), Dom(lo=0.5, hi=4.0)),
       tol=_SPECIAL_TOL)
add(OpCase("betainc", "regularized_incomplete_beta", lax.betainc, sps.betainc, FLOAT,
           (((), (), ()), ((0,), (0,), (0,)), ((2, 3), (2, 3), (2, 3)), ((2, 3), (), (2, 3)),
            ((1, 3), (2, 3), (2, 1))),
           doms=(Dom(lo=0.5, hi=5.0), Dom(lo=0.5, hi=5.0), Dom(lo=0.05, hi=0.95)),
           tol=_SPECIAL_TOL))
unary("bessel_i0e", lax.bessel_i0e, sps.i0e, FLOAT, doms=Dom(lo=-12.0, hi=12.0),
      differentiable=True)
unary("bessel_i1e", lax.bessel_i1e, sps.i1e, FLOAT, doms=Dom(lo=-12.0, hi=12.0),
      differentiable=True)
binary("mulhi", lax.mulhi, _mulhi_ref, INT, doms=SPECIAL)
unary("reduce_precision", lambda x: lax.reduce_precision(x, 5, 10),
      _reduce_precision_ref(np.float16), FLOAT, name="reduce_precision_to_half")
unary("reduce_precision", lambda x: lax.reduce_precision(x, 8, 7),
      _reduce_precision_ref(ml_dtypes.bfloat16), FLOAT, name="reduce_precision_to_bfloat16")
# reduce_precision's JAX rule is linear (the tangent is rounded too) though rounding is not:
# no finite-difference or adjoint check; tests/test_lax_special.py compares its jaxprs
# -- end of special functions -----------------------------------------------------------------

# ---------------------------------------------------------------------------------------------
# select_n, clamp, convert_element_type
# ---------------------------------------------------------------------------------------------

add(OpCase("select_n_bool", "select_n", lambda p, a, b: lax.select_n(p, a, b),
           lambda p, a, b: np.where(p, b, a), ALL,
           (((), (), ()), ((0,), (0,), (0,)), ((2, 3), (2, 3), (2, 3)),
            ((), (2, 3), (2, 3))),
           doms=FULL_INT, arg_dtypes=("bool", None, None), weak_args=(1, 2),
           differentiable=True, linear=(1, 2)))
add(OpCase("select_n_int", "select_n", lambda i, a, b, c: lax.select_n(i, a, b, c),
           lambda i, a, b, c: np.choose(i, [a, b, c]), ALL,
           (((4,), (4,), (4,), (4,)), ((2, 3), (2, 3), (2, 3), (2, 3)),
            ((), (3,), (3,), (3,))),
           doms=(Dom(ilo=0, ihi=2), FULL_INT, FULL_INT, FULL_INT),
           arg_dtypes=("int32", None, None, None), weak_args=(1, 2, 3), differentiable=True,
           linear=(1, 2, 3)))
add(OpCase("select_n_uint8_which", "select_n", lambda i, a, b: lax.select_n(i, a, b),
           lambda i, a, b: np.choose(i, [a, b]), ("float32", "int32"),
           (((5,), (5,), (5,)),), doms=(Dom(ilo=0, ihi=1), DEFAULT, DEFAULT),
           arg_dtypes=("uint8", None, None), weak_args=(1, 2), exact_dtypes=False))
add(OpCase("clamp", "clamp", lax.clamp, lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi),
           ALL, (((), (5,), ()), ((2, 3), (2, 3), (2, 3)), ((), (0,), ()), ((), (), ())),
           doms=(Dom(lo=-3.0, hi=-0.5, ilo=-20, ihi=3), Dom(lo=-5.0, hi=5.0, ilo=-40, ihi=40),
                 Dom(lo=0.5, hi=3.0, ilo=5, ihi=25)),
           differentiable=True))

for _dst in ALL:
    add(OpCase(f"convert_element_type_to_{_dst}", "convert_element_type",
               (lambda d: lambda x: lax.convert_element_type(x, DTYPES[d]))(_dst),
               _convert(_dst), ALL, UNARY_SHAPES + (((12,),),),
               doms=Dom(ilo=None, ihi=None, specials=True, big=True, lo=-300.0, hi=300.0),
               out_dtype=_dst, native_ref=True, weak="never",
               differentiable=_dst in INEXACT, linear=(0,) if _dst in INEXACT else (),
               binds=(lambda d: lambda src: src != d)(_dst)))

# ---------------------------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------------------------

RED_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (4e-2, 4e-2)}
_red_shapes = {
    "all": (((),), ((0,),), ((2, 3),), ((0, 3),)),
    "axis0": (((4,),), ((0,),), ((2, 3),), ((0, 3),)),
    "axis1": (((2, 3),), ((3, 0),), ((2, 0),)),
    "axes02": (((2, 3, 2),), ((2, 0, 3),)),
    "none": (((2, 3),), ((),)),
}
_red_axes = {"all": None, "axis0": (0,), "axis1": (1,), "axes02": (0, 2), "none": ()}


def _axes_of(key: str, x: Any) -> tuple[int, ...]:
    return tuple(range(np.ndim(x))) if _red_axes[key] is None else _red_axes[key]


for _prim, _lax_fn, _np_fn, _ident, _dts, _dom, _lin in (
        ("reduce_sum", lax.reduce_sum, _int_sum, None, NUMBER, Dom(lo=-1.0, hi=1.0, ilo=None,
                                                                    ihi=None), (0,)),
        ("reduce_prod", lax.reduce_prod, _int_prod, None, NUMBER, TINY_INT, ()),
        ("reduce_max", lax.reduce_max, np.max, _lowest, ALL, SPECIAL_REAL, ()),
        ("reduce_min", lax.reduce_min, np.min, _highest, ALL, SPECIAL_REAL, ()),
        ("reduce_and", lax.reduce_and, np.bitwise_and.reduce, _all_ones, INTEGRAL, FULL_INT, ()),
        ("reduce_or", lax.reduce_or, np.bitwise_or.reduce, lambda dt: dt.type(0), INTEGRAL,
         FULL_INT, ()),
        ("reduce_xor", lax.reduce_xor, np.bitwise_xor.reduce, lambda dt: dt.type(0), INTEGRAL,
         FULL_INT, ())):
    for _key in _red_shapes:
        add(OpCase(f"{_prim}_{_key}", _prim,
                   (lambda f, k: lambda x: f(x, _axes_of(k, x)))(_lax_fn, _key),
                   (lambda f, k, i: lambda x: _reduce(f, _axes_of(k, x), i)(x))(
                       _np_fn, _key, _ident),
                   _dts, _red_shapes[_key], doms=_dom, tol=RED_TOL,
                   # JAX strips the weak type of the bitwise reductions only
                   weak="never" if _prim in ("reduce_and", "reduce_or", "reduce_xor") else "all",
                   differentiable=_prim in ("reduce_sum", "reduce_prod", "reduce_max",
                                            "reduce_min") and _key != "none",
                   linear=_lin))

#: a long half-precision sum: XLA accumulates in float32 (1000 ones sum to 1000, not 256)
ONES = Dom(lo=1.0, hi=1.0, ilo=1, ihi=1)
add(OpCase("reduce_sum_long_half", "reduce_sum", lambda x: lax.reduce_sum(x, (0,)),
           lambda x: np.sum(x, axis=0), ("float16", "bfloat16"), (((1000,),), ((3, 700),)),
           doms=ONES, exact_dtypes=False, linear=(0,)))

for _prim, _lax_fn, _np_fn in (("argmax", lax.argmax, np.argmax),
                               ("argmin", lax.argmin, np.argmin)):
    add(OpCase(f"{_prim}_axis0", _prim, (lambda f: lambda x: f(x, 0, np.int32))(_lax_fn),
               (lambda f: lambda x: f(x, axis=0))(_np_fn), ORDERED,
               (((5,),), ((3, 4),), ((2, 0),)), doms=Dom(ilo=-2, ihi=2, specials=True),
               out_dtype="int32", weak="never"))
    add(OpCase(f"{_prim}_axis1_int16", _prim,
               (lambda f: lambda x: f(x, 1, np.int16))(_lax_fn),
               (lambda f: lambda x: f(x, axis=1))(_np_fn), ORDERED,
               (((3, 4),), ((0, 3),)), doms=Dom(ilo=-2, ihi=2, specials=True),
               out_dtype="int16", weak="never"))
    add(OpCase(f"{_prim}_index_int64", _prim, (lambda f: lambda x: f(x, 0, np.int64))(_lax_fn),
               (lambda f: lambda x: f(x, axis=0))(_np_fn), ("float32", "int8"),
               (((6,),), ((3, 2),)), doms=Dom(ilo=-2, ihi=2), out_dtype="int64",
               weak="never", exact_dtypes=False))

# ---------------------------------------------------------------------------------------------
# shape operations
# ---------------------------------------------------------------------------------------------

SHAPE_DOM = FULL_INT


def shape_op(name: str, prim: str, fn: Callable, ref: Callable, shapes: tuple, **kw: Any
             ) -> OpCase:
    kw.setdefault("differentiable", True)
    kw.setdefault("linear", tuple(range(len(shapes[0]))))
    return add(OpCase(name, prim, fn, ref, ALL, shapes, doms=SHAPE_DOM, **kw))


def _bid(shape: tuple, dims: tuple) -> tuple[Callable, Callable]:
    def ref(x: np.ndarray) -> np.ndarray:
        expanded = [1] * len(shape)
        for d, s in zip(dims, x.shape):
            expanded[d] = s
        return np.broadcast_to(x.reshape(expanded), shape)
    return (lambda x: lax.broadcast_in_dim(x, shape, dims)), ref


for _tag, _in, _out, _dims in (("vector_to_matrix", (3,), (2, 3), (1,)),
                               ("scalar", (), (2, 2), ()),
                               ("size1_axis", (1, 3), (4, 3), (0, 1)),
                               ("to_size0", (2,), (2, 0), (0,)),
                               ("middle", (4,), (2, 4, 3), (1,))):
    _f, _r = _bid(_out, _dims)
    shape_op(f"broadcast_in_dim_{_tag}", "broadcast_in_dim", _f, _r, (((_in),),))

for _tag, _in, _new, _dims in (("2x3_to_3x2", (2, 3), (3, 2), None),
                               ("flat_to_2x3", (6,), (2, 3), None),
                               ("scalar_to_1x1", (), (1, 1), None),
                               ("size0", (0, 3), (3, 0), None),
                               ("with_dimensions", (2, 3), (3, 2), (1, 0))):
    shape_op(f"reshape_{_tag}", "reshape",
             (lambda n, d: lambda x: lax.reshape(x, n, d))(_new, _dims),
             (lambda n, d: lambda x: np.reshape(x if d is None else np.transpose(x, d), n))(
                 _new, _dims),
             (((_in),),))

for _tag, _in, _perm in (("2d", (2, 3), (1, 0)), ("3d", (2, 3, 4), (2, 0, 1)),
                         ("size0", (0, 3, 1), (1, 2, 0))):
    shape_op(f"transpose_{_tag}", "transpose",
             (lambda p: lambda x: lax.transpose(x, p))(_perm),
             (lambda p: lambda x: np.transpose(x, p))(_perm), (((_in),),))

for _tag, _in, _dims in (("leading", (1, 3), (0,)), ("two", (2, 1, 3, 1), (1, 3)),
                         ("to_scalar", (1, 1), (0, 1)), ("size0", (0, 1), (1,))):
    shape_op(f"squeeze_{_tag}", "squeeze",
             (lambda d: lambda x: lax.squeeze(x, d))(_dims),
             (lambda d: lambda x: np.squeeze(x, d))(_dims), (((_in),),))

shape_op("concatenate_axis0", "concatenate", lambda a, b, c: lax.concatenate([a, b, c], 0),
         lambda a, b, c: np.concatenate([a, b, c], 0),
         (((2, 3), (1, 3), (0, 3)), ((1,), (4,), (2,))))
shape_op("concatenate_axis1", "concatenate", lambda a, b: lax.concatenate([a, b], 1),
         lambda a, b: np.concatenate([a, b], 1), (((2, 3), (2, 1)), ((0, 2), (0, 5))))
shape_op("stack_axis0", "stack", lambda a, b: bind("stack", a, b, axis=0),
         lambda a, b: np.stack([a, b], 0), (((2, 3), (2, 3)), ((), ()), ((0,), (0,))))
shape_op("stack_axis_last", "stack", lambda a, b, c: bind("stack", a, b, c, axis=2),
         lambda a, b, c: np.stack([a, b, c], 2), (((2, 3), (2, 3), (2, 3)),))
shape_op("tile", "tile", lambda x: bind("tile", x, reps=(2, 3)),
         lambda x: np.tile(x, (2, 3)), (((2, 3),), ((0, 2),), ((1, 1),)))
shape_op("reorder_axis0", "reorder", lambda x: bind("reorder", x, axis=0, order=(2, 0, 1)),
         lambda x: x[[2, 0, 1]], (((3, 2),), ((3,),)))
shape_op("reorder_axis1", "reorder", lambda x: bind("reorder", x, axis=1, order=(1, 3, 0, 2)),
         lambda x: x[:, [1, 3, 0, 2]], (((2, 4),), ((0, 4),)))
shape_op("tile_zero_reps", "tile", lambda x: bind("tile", x, reps=(0, 1)),
         lambda x: np.tile(x, (0, 1)), (((2, 3),),))

for _tag, _config, _shape in (("low_high", ((1, 2, 0),), (3,)),
                              ("interior", ((0, 0, 2), (1, 0, 1)), (3, 2)),
                              ("negative", ((-1, 2, 0), (0, -2, 1)), (3, 4)),
                              ("negative_interior", ((-2, -1, 2),), (4,)),
                              ("size0", ((1, 1, 3),), (0,)),
                              ("scalar", (), ())):
    shape_op(f"pad_{_tag}", "pad", (lambda c: lambda x, v: lax.pad(x, v, c))(_config),
             (lambda c: lambda x, v: _pad_ref(x, v, c))(_config), (((_shape), ()),))

for _tag, _in, _dims in (("axis0", (4,), (0,)), ("both", (2, 3), (0, 1)),
                         ("middle", (2, 3, 2), (1,)), ("none", (2, 3), ()),
                         ("size0", (0, 3), (0, 1))):
    shape_op(f"rev_{_tag}", "rev", (lambda d: lambda x: lax.rev(x, d))(_dims),
             (lambda d: lambda x: np.flip(x, d) if d else x)(_dims), (((_in),),))

for _tag, _in, _start, _limit, _strides in (
        ("basic", (5,), (1,), (4,), None), ("2d", (4, 5), (1, 0), (3, 5), None),
        ("strides", (7, 6), (0, 1), (7, 6), (2, 3)), ("empty", (4,), (2,), (2,), None),
        ("strided_empty", (4, 3), (1, 3), (4, 3), (2, 1)), ("full", (3,), (0,), (3,), (1,))):
    shape_op(f"slice_{_tag}", "slice",
             (lambda s, l, st: lambda x: lax.slice(x, s, l, st))(_start, _limit, _strides),
             (lambda s, l, st: lambda x: x[tuple(
                 slice(a, b, c) for a, b, c in zip(s, l, st or (1,) * len(s)))])(
                 _start, _limit, _strides),
             (((_in),),))

for _tag, _shape, _dim in (("1d", (5,), 0), ("2d_dim1", (2, 3), 1), ("3d_dim0", (3, 2, 2), 0),
                           ("size0", (0, 3), 1)):
    add(OpCase(f"iota_{_tag}", "iota",
               (lambda s, d: lambda *, dtype: lax.broadcasted_iota(DTYPES[dtype], s, d))(
                   _shape, _dim),
               (lambda s, d: lambda *, dtype: np.broadcast_to(
                   np.arange(s[d]).reshape([s[d] if i == d else 1 for i in range(len(s))]),
                   s))(_shape, _dim),
               NUMBER, ((),), pass_dtype=True, weak="never"))

# ---------------------------------------------------------------------------------------------
# dot_general
# ---------------------------------------------------------------------------------------------

DOT_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (3e-2, 5e-2)}
for _tag, _dims, _shapes in (
        ("matmul", (((1,), (0,)), ((), ())), (((2, 3), (3, 4)), ((0, 3), (3, 2)))),
        ("vector", (((0,), (0,)), ((), ())), (((4,), (4,)), ((0,), (0,)))),
        ("batch", (((2,), (1,)), ((0,), (0,))), (((2, 3, 4), (2, 4, 5)), ((0, 1, 2), (0, 2, 3)))),
        ("outer", (((), ()), ((), ())), (((3,), (2,)), ((), (2,)))),
        ("contract_first", (((0,), (0,)), ((), ())), (((3, 2), (3, 4)),)),
        ("empty_contraction", (((1,), (0,)), ((), ())), (((3, 0), (0, 2)),)),
        ("batch_middle", (((0,), (2,)), ((1,), (0,))), (((3, 2, 4), (2, 5, 3)),))):
    add(OpCase(f"dot_general_{_tag}", "dot_general",
               (lambda d: lambda x, y: lax.dot_general(x, y, d))(_dims), _einsum_ref(_dims),
               BOOL + NUMBER, _shapes, doms=TINY_INT, tol=DOT_TOL, differentiable=True,
               linear=(0, 1)))
add(OpCase("dot_general_long_half", "dot_general",
           lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ()))),
           _einsum_ref((((1,), (0,)), ((), ()))), ("float16", "bfloat16"),
           (((2, 1000), (1000, 2)),), doms=ONES, exact_dtypes=False, linear=(0, 1)))
for _src, _dst in (("int8", "int32"), ("float16", "float32"), ("bfloat16", "float32"),
                   ("int16", "int64"), ("float32", "float64")):
    _dims = (((1,), (0,)), ((), ()))
    add(OpCase(f"dot_general_preferred_{_src}_{_dst}", "dot_general",
               (lambda d, t: lambda x, y: lax.dot_general(
                   x, y, d, preferred_element_type=DTYPES[t]))(_dims, _dst),
               _einsum_ref(_dims), (_src,), (((2, 3), (3, 4)), ((1, 0), (0, 2))),
               doms=TINY_INT, out_dtype=_dst, differentiable=_src in FLOAT, linear=(0, 1),
               exact_dtypes=False))


# ---------------------------------------------------------------------------------------------
# cumulative reductions, sort, split, bitcast, identities (keyed on the registry)
# ---------------------------------------------------------------------------------------------

CUM_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (4e-2, 4e-2)}


def _cum_ref(np_fn: Callable, axis: int, reverse: bool) -> Callable[[np.ndarray], np.ndarray]:
    def ref(x: np.ndarray) -> np.ndarray:
        if reverse:
            x = np.flip(x, axis)
        if x.dtype.kind in "iu" and np_fn in (np.cumsum, np.cumprod):
            out = np_fn(x, axis, dtype=x.dtype)
        else:
            out = np_fn(x, axis)
        return np.flip(out, axis) if reverse else out
    return ref


def _sort_key_val_ref(k: np.ndarray, v: np.ndarray) -> list[np.ndarray]:
    order = np.argsort(k, axis=-1, kind="stable")  # NaN last, -0.0 == 0.0
    return [np.take_along_axis(k, order, -1), np.take_along_axis(v, order, -1)]


def _extra_cases() -> None:
    for prim, np_fn, dts, dom in (
            ("cumsum", np.cumsum, NUMBER, Dom(lo=-1.0, hi=1.0, ilo=None, ihi=None)),
            ("cumprod", np.cumprod, NUMBER, TINY_INT),
            ("cummax", np.maximum.accumulate, NUMBER, SPECIAL_REAL),
            ("cummin", np.minimum.accumulate, NUMBER, SPECIAL_REAL),
            ("cumlogsumexp", np.logaddexp.accumulate, FLOAT, DEFAULT)):
        if prim not in registry:
            continue
        for axis, reverse, shapes in ((0, False, (((5,),), ((0,),), ((3, 4),))),
                                      (1, True, (((3, 4),), ((2, 0),)))):
            add(OpCase(f"{prim}_axis{axis}{'_reverse' if reverse else ''}", prim,
                       (lambda p, a, r: lambda x: getattr(lax, p)(x, a, r))(prim, axis, reverse),
                       _cum_ref(np_fn, axis, reverse), dts, shapes, doms=dom, tol=CUM_TOL,
                       differentiable=True,
                       linear=(0,) if prim == "cumsum" else (),
                       # lax.cumlogsumexp of integers fails with OverflowError in JAX
                       exact_dtypes=prim != "cumlogsumexp"))

    if "cumsum" in registry:
        add(OpCase("cumsum_long_half", "cumsum", lambda x: lax.cumsum(x, 0),
                   lambda x: np.cumsum(x, 0), ("float16", "bfloat16"), (((1000,),),),
                   doms=ONES, exact_dtypes=False, linear=(0,)))

    if "sort" in registry:
        add(OpCase("sort_1d", "sort", lambda x: lax.sort(x),
                   lambda x: np.sort(x, kind="stable"), ALL, (((7,),), ((0,),), ((3, 4),)),
                   doms=Dom(ilo=-3, ihi=3, specials=True, halves=True), differentiable=True))
        add(OpCase("sort_dim0", "sort", lambda x: lax.sort(x, dimension=0),
                   lambda x: np.sort(x, axis=0, kind="stable"), ALL, (((4, 3),),),
                   doms=SPECIAL, differentiable=True))
        add(OpCase("sort_key_val", "sort", lambda k, v: list(lax.sort_key_val(k, v)),
                   _sort_key_val_ref, ALL, (((8,), (8,)), ((2, 5), (2, 5)), ((0,), (0,))),
                   doms=(Dom(ilo=-2, ihi=2, halves=True, specials=True), FULL_INT),
                   arg_dtypes=(None, "int32"), out_dtype=lambda d: (d, "int32"), weak="each",
                   multiple=True, differentiable=True))

    if "split" in registry:
        add(OpCase("split_axis0", "split", lambda x: list(lax.split(x, (1, 0, 3), 0)),
                   lambda x: np.split(x, [1, 1], 0), ALL, (((4, 2),), ((4,),)),
                   doms=FULL_INT, multiple=True, differentiable=True, linear=(0,)))
        add(OpCase("split_axis1", "split", lambda x: list(lax.split(x, (2, 2), 1)),
                   lambda x: np.split(x, [2], 1), ALL, (((3, 4),), ((0, 4),)),
                   doms=FULL_INT, multiple=True, differentiable=True, linear=(0,)))

    if "unstack" in registry:
        add(OpCase("unstack_axis1", "unstack", lambda x: list(bind("unstack", x, axis=1)),
                   lambda x: [x[:, i] for i in range(x.shape[1])], ALL,
                   (((3, 4),), ((0, 2),)), doms=FULL_INT, multiple=True,
                   differentiable=True, linear=(0,)))

    if "bitcast_convert_type" in registry:
        for src, dst, shape in (("float32", "int32", (2, 3)), ("int32", "float32", (4,)),
                                ("uint8", "int8", (5,)), ("float16", "bfloat16", (3,)),
                                ("float32", "uint8", (2, 3)), ("uint8", "float32", (3, 4)),
                                ("int16", "uint8", ()), ("float64", "int64", (3,)),
                                ("uint32", "uint16", (2,)), ("int8", "int16", (3, 2))):
            add(OpCase(f"bitcast_convert_type_{src}_to_{dst}", "bitcast_convert_type",
                       (lambda d: lambda x: lax.bitcast_convert_type(x, DTYPES[d]))(dst),
                       (lambda d: lambda x: _bitcast_ref(x, DTYPES[d]))(dst), (src,),
                       (((shape),),), doms=Dom(ilo=None, ihi=None, specials=True),
                       native_ref=True, out_dtype=dst, weak="never", exact_dtypes=False))

    if "stop_gradient" in registry:
        add(OpCase("stop_gradient", "stop_gradient", lambda x: lax.stop_gradient(x),
                   lambda x: x, ALL, UNARY_SHAPES, doms=FULL_INT, native_ref=True))
    if "copy" in registry:
        from pyjax._src.primitives.extra import array_copy  # no public lax name
        add(OpCase("copy", "copy", lambda x: array_copy(x), lambda x: x.copy(), ALL,
                   UNARY_SHAPES, doms=FULL_INT, native_ref=True, differentiable=True,
                   linear=(0,)))


def _bitcast_ref(x: np.ndarray, new: np.dtype) -> np.ndarray:
    old = x.dtype.itemsize
    if old == new.itemsize:
        return x.view(new)
    if old > new.itemsize:
        return np.ascontiguousarray(x).reshape(*x.shape, 1).view(new)
    return np.ascontiguousarray(x).view(new).reshape(x.shape[:-1])


_extra_cases()

# ---------------------------------------------------------------------------------------------
# indexing (added when the primitives exist)
# ---------------------------------------------------------------------------------------------

IDX = Dom(ilo=-3, ihi=7)          # start indices, partly out of bounds


def _start(i: Any, n: int, size: int) -> int:
    """lax.dynamic_slice's start: negative indices count from the end, then clamp."""
    i = int(i)
    i = i + n if i < 0 else i
    return min(max(i, 0), n - size)


def _ds_ref(x: np.ndarray, i: Any, j: Any) -> np.ndarray:
    a, b = _start(i, x.shape[0], 2), _start(j, x.shape[1], 2)
    return x[a:a + 2, b:b + 2]


def _dus_ref(x: np.ndarray, u: np.ndarray, i: Any, j: Any) -> np.ndarray:
    out = x.copy()
    a, b = _start(i, x.shape[0], u.shape[0]), _start(j, x.shape[1], u.shape[1])
    out[a:a + u.shape[0], b:b + u.shape[1]] = u
    return out


def _fill_value(dt: np.dtype) -> Any:
    if dt == np.bool_:
        return True
    if dt.kind in "iu":
        return np.iinfo(dt).max if dt.kind == "u" else np.iinfo(dt).min
    return np.nan


def _take_ref(mode: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """operand[indices[:, 0]] along axis 0, clamping or filling out-of-bounds rows."""
    def ref(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
        rows = idx[:, 0].astype(np.int64)
        out = x[np.clip(rows, 0, x.shape[0] - 1)] if x.shape[0] else \
            np.zeros((len(rows),) + x.shape[1:], x.dtype)
        if mode == "fill":
            bad = (rows < 0) | (rows >= x.shape[0])
            out = np.where(bad[:, None], np.asarray(_fill_value(x.dtype), x.dtype), out)
        return out
    return ref


def _point_ref(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    i = np.clip(idx[..., 0].astype(np.int64), 0, x.shape[0] - 1)
    j = np.clip(idx[..., 1].astype(np.int64), 0, x.shape[1] - 1)
    return x[i, j]


def _window_ref(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    starts = np.clip(idx[:, 0].astype(np.int64), 0, x.shape[1] - 2)
    return np.stack([x[:, s:s + 2] for s in starts]) if len(starts) else \
        np.zeros((0, x.shape[0], 2), x.dtype)


def _scatter_ref(kind: str) -> Callable[..., np.ndarray]:
    """Rows of `updates` combined into operand rows indices[:, 0]; out-of-bounds rows are
    dropped (FILL_OR_DROP, the default mode)."""
    def ref(x: np.ndarray, idx: np.ndarray, upd: np.ndarray) -> np.ndarray:
        out = x.copy()
        for r, row in zip(idx[:, 0].tolist(), upd):
            if not 0 <= r < x.shape[0]:
                continue
            if kind == "set":
                out[r] = row
            elif kind == "add":
                out[r] = out[r] + row if x.dtype != np.bool_ else out[r] | row
            elif kind == "sub":
                out[r] = out[r] - row
            elif kind == "mul":
                out[r] = out[r] * row if x.dtype != np.bool_ else out[r] & row
            elif kind == "min":
                out[r] = np.minimum(out[r], row)
            else:
                out[r] = np.maximum(out[r], row)
        return out
    return ref


def _indexing_cases() -> None:
    if "dynamic_slice" in registry:
        add(OpCase("dynamic_slice", "dynamic_slice",
                   lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 2)), _ds_ref, ALL,
                   (((4, 5), (), ()), ((2, 2), (), ())), doms=(FULL_INT, IDX, IDX),
                   arg_dtypes=(None, "int32", "int32"), native_ref=True, weak_args=(0,),
                   differentiable=True, linear=(0,)))
    if "dynamic_update_slice" in registry:
        add(OpCase("dynamic_update_slice", "dynamic_update_slice",
                   lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)), _dus_ref, ALL,
                   (((4, 5), (2, 3), (), ()), ((3, 3), (3, 0), (), ())),
                   doms=(FULL_INT, FULL_INT, IDX, IDX), arg_dtypes=(None, None, "int32", "int32"),
                   native_ref=True, weak="never", differentiable=True, linear=(0, 1)))
    if "gather" in registry:
        take = lambda: lax.GatherDimensionNumbers(  # noqa: E731
            offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
        for mode in ("clip", "fill"):
            add(OpCase(f"gather_take_{mode}", "gather",
                       (lambda m: lambda x, i: lax.gather(x, i, take(), (1, x.shape[1]),
                                                          mode=m))(mode),
                       _take_ref(mode), ALL, (((5, 3), (4, 1)), ((5, 0), (2, 1))),
                       doms=(FULL_INT, Dom(ilo=-2, ihi=6)), arg_dtypes=(None, "int32"),
                       native_ref=True, weak_args=(0,), differentiable=True, linear=(0,)))
        add(OpCase("gather_point_clip", "gather",
                   lambda x, i: lax.gather(x, i, lax.GatherDimensionNumbers(
                       offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1)),
                       (1, 1), mode="clip"),
                   _point_ref, ALL, (((4, 5), (3, 2)), ((4, 5), (2, 3, 2))),
                   doms=(FULL_INT, Dom(ilo=-1, ihi=6)), arg_dtypes=(None, "int32"),
                   native_ref=True, weak_args=(0,), differentiable=True, linear=(0,)))
        add(OpCase("gather_window_clip", "gather",
                   lambda x, i: lax.gather(x, i, lax.GatherDimensionNumbers(
                       offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(1,)),
                       (x.shape[0], 2), mode="clip"),
                   _window_ref, ALL, (((3, 5), (4, 1)), ((2, 4), (0, 1))),
                   doms=(FULL_INT, Dom(ilo=-1, ihi=6)), arg_dtypes=(None, "int32"),
                   native_ref=True, weak_args=(0,), differentiable=True, linear=(0,)))
    scatter_dn = lambda: lax.ScatterDimensionNumbers(  # noqa: E731
        update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    for prim, fn_name, kind, dts, lin in (
            ("scatter", "scatter", "set", ALL, (0, 2)),
            ("scatter-add", "scatter_add", "add", NUMBER, (0, 2)),
            ("scatter-sub", "scatter_sub", "sub", NUMBER, (0, 2)),
            ("scatter-mul", "scatter_mul", "mul", NUMBER, (0,)),
            ("scatter-min", "scatter_min", "min", ALL, ()),
            ("scatter-max", "scatter_max", "max", ALL, ())):
        if prim not in registry:
            continue
        # `set` needs distinct in-bounds rows (XLA leaves the winner of a collision unspecified)
        idx_dom = Dom(ilo=0, ihi=4, unique=True) if kind == "set" else Dom(ilo=-1, ihi=5)
        add(OpCase(prim.replace("-", "_"), prim,
                   (lambda f: lambda x, i, u: getattr(lax, f)(x, i, u, scatter_dn()))(fn_name),
                   _scatter_ref(kind), dts,
                   (((5, 3), (4, 1), (4, 3)), ((5, 3), (0, 1), (0, 3)), ((5, 0), (2, 1), (2, 0))),
                   doms=(SMALL, idx_dom, SMALL), arg_dtypes=(None, "int32", None),
                   native_ref=kind not in ("add", "sub", "mul"), weak_args=(0,),
                   tol=RED_TOL, differentiable=True, linear=lin))


_indexing_cases()

# ---------------------------------------------------------------------------------------------
# convolutions and windowed reductions (pyjax/_src/primitives/conv.py, windows.py)
# ---------------------------------------------------------------------------------------------

def _conv_ref(strides: tuple, padding: tuple, lhs_dil: tuple, rhs_dil: tuple, dn: Any,
              fgc: int = 1) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """XLA's convolution by definition: dilate, pad, then one einsum per kernel tap (bool:
    OR of ANDs; integers wrap in the result dtype)."""
    def ref(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        is_bool = lhs.dtype == np.bool_
        if is_bool or lhs.dtype.kind in "iu":
            lhs, rhs = lhs.astype(np.int64), rhs.astype(np.int64)
        ls, rs, os_ = lax.conv_dimension_numbers(lhs.shape, rhs.shape, dn)
        x, w = np.transpose(lhs, ls), np.transpose(rhs, rs)
        xd = np.zeros(x.shape[:2] + tuple(1 + k * (d - 1) for d, k in zip(x.shape[2:], lhs_dil)),
                      x.dtype)
        xd[(slice(None), slice(None), *(slice(None, None, k) for k in lhs_dil))] = x
        for i, (lo, hi) in enumerate(padding):
            xd = np.take(xd, range(max(-lo, 0), xd.shape[2 + i] - max(-hi, 0)), axis=2 + i)
            widths = [(0, 0)] * xd.ndim
            widths[2 + i] = (max(lo, 0), max(hi, 0))
            xd = np.pad(xd, widths)
        o, ks = w.shape[0], w.shape[2:]
        cg, og = x.shape[1] // fgc, o // fgc
        out_sp = [(s - (1 + d * (k - 1))) // st + 1
                  for s, k, d, st in zip(xd.shape[2:], ks, rhs_dil, strides)]
        out = np.zeros((x.shape[0], o, *out_sp), np.result_type(x, w))
        for f in range(o):
            g = f // og
            for tap in np.ndindex(*ks):
                index = tuple(slice(t * d, t * d + (m - 1) * s + 1, s)
                              for t, d, m, s in zip(tap, rhs_dil, out_sp, strides))
                patch = xd[(slice(None), slice(g * cg, (g + 1) * cg), *index)]
                out[:, f] += np.einsum("nc...,c->n...", patch, w[(f, slice(None), *tap)])
        out = np.transpose(out, np.argsort(os_))
        return out != 0 if is_bool else out
    return ref


def _window_fill(kind: str, dt: np.dtype) -> Any:
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    big = kind == "min"
    if dt == np.bool_:
        return big
    if dt.kind in "iu":
        return np.iinfo(dt).max if big else np.iinfo(dt).min
    return np.inf if big else -np.inf


def _window_ref(kind: str, dims: tuple, strides: tuple, padding: tuple,
                base: tuple | None = None, wdil: tuple | None = None
                ) -> Callable[[np.ndarray], np.ndarray]:
    """Windowed reduction by definition: the operand dilated and padded with the reduction's
    identity, each output element reduced from its window (integers wrap)."""
    def spread(x: np.ndarray, fill: Any) -> np.ndarray:
        b = base or (1,) * x.ndim
        xd = np.full(tuple(1 + k * (d - 1) if d else 0 for d, k in zip(x.shape, b)), fill,
                     x.dtype)
        xd[tuple(slice(None, None, k) for k in b)] = x
        for ax, (lo, hi) in enumerate(padding):
            xd = np.take(xd, range(max(-lo, 0), xd.shape[ax] - max(-hi, 0)), axis=ax)
            widths = [(0, 0)] * xd.ndim
            widths[ax] = (max(lo, 0), max(hi, 0))
            xd = np.pad(xd, widths, constant_values=fill)
        return xd

    def windows(xd: np.ndarray) -> Iterator[tuple]:
        w = wdil or (1,) * xd.ndim
        eff = [1 + d * (k - 1) for k, d in zip(dims, w)]
        out_shape = tuple(max((s - e) // st + 1, 0) for s, e, st in zip(xd.shape, eff, strides))
        for idx in np.ndindex(*out_shape):
            yield out_shape, idx, tuple(slice(i * st, i * st + e, d)
                                        for i, st, e, d in zip(idx, strides, eff, w))

    def ref(x: np.ndarray) -> np.ndarray:
        xd = spread(x, _window_fill(kind, x.dtype))
        fn = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[kind]
        w = wdil or (1,) * x.ndim
        eff = [1 + d * (k - 1) for k, d in zip(dims, w)]
        out = np.zeros(tuple(max((s - e) // st + 1, 0)
                             for s, e, st in zip(xd.shape, eff, strides)), x.dtype)
        for _, idx, window in windows(xd):
            out[idx] = fn(xd[window], dtype=x.dtype) if kind in ("sum", "prod") else \
                fn(xd[window])
        return out

    ref.spread, ref.windows = spread, windows  # used by the select_and_* references
    return ref


def _select_gather_ref(dims: tuple, strides: tuple, padding: tuple, base: tuple,
                       wdil: tuple) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The tangent at each window's first maximum."""
    win = _window_ref("max", dims, strides, padding, base, wdil)

    def ref(t: np.ndarray, x: np.ndarray) -> np.ndarray:
        xd, td = win.spread(x, -np.inf), win.spread(t, 0.0)
        out = None
        for shape, idx, window in win.windows(xd):
            out = np.zeros(shape, t.dtype) if out is None else out
            out[idx] = td[window].flat[np.argmax(xd[window])]
        return out
    return ref


def _select_scatter_ref(dims: tuple, strides: tuple, padding: tuple
                        ) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Each window's source value added at its first maximum."""
    win = _window_ref("max", dims, strides, padding)

    def ref(s: np.ndarray, x: np.ndarray) -> np.ndarray:
        xd = win.spread(x, -np.inf)
        acc = np.zeros(xd.shape, s.dtype)
        for _, idx, window in win.windows(xd):
            pos = np.unravel_index(np.argmax(xd[window]), xd[window].shape)
            acc[window][pos] += s[idx]
        return acc[tuple(slice(lo, lo + d) for d, (lo, _) in zip(x.shape, padding))]
    return ref


def _window_init(kind: str, x: Any) -> Any:
    """The identity of the reduction as a scalar of x's dtype (so the monoid primitive binds)."""
    return np.array(_window_fill(kind, np.dtype(x.dtype))).astype(x.dtype)


_CONV_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (3e-2, 5e-2)}
_WIN_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (4e-2, 4e-2)}


def _conv_window_cases() -> None:
    if "conv_general_dilated" in registry:
        for tag, args, shapes, lin in (
                ("nchw_same_lhs", ((1, 1), "SAME", None, None, None, 1),
                 (((1, 2, 3, 4), (2, 2, 3, 2)), ((0, 3, 4, 5), (4, 3, 3, 2))), (0,)),
                ("strided_dilated_rhs", ((2, 1), ((1, 0), (2, -1)), (2, 1), (1, 2), None, 1),
                 (((1, 2, 4, 5), (3, 2, 2, 2)),), (1,)),
                ("nhwc_groups_lhs", ((1, 2), ((0, 1), (1, 1)), None, None,
                                     ("NHWC", "HWIO", "NHWC"), 2),
                 (((2, 4, 5, 4), (2, 3, 2, 4)),), (0,)),
                ("1d_rhs", ((1,), "VALID", None, None, None, 1), (((2, 3, 6), (2, 3, 3)),), (1,))):
            strides, padding, ld, rd, dn, fgc = args
            nsp = len(strides)
            pads = padding if not isinstance(padding, str) else tuple(lax.padtype_to_pads(
                np.take(shapes[0][0], lax.conv_dimension_numbers(
                    shapes[0][0], shapes[0][1], dn).lhs_spec)[2:],
                np.take(shapes[0][1], lax.conv_dimension_numbers(
                    shapes[0][0], shapes[0][1], dn).rhs_spec)[2:], strides, padding))
            add(OpCase(f"conv_general_dilated_{tag}", "conv_general_dilated",
                       (lambda s, p, l, r, d, g: lambda x, w: lax.conv_general_dilated(
                           x, w, s, p, l, r, d, feature_group_count=g))(
                           strides, padding, ld, rd, dn, fgc),
                       _conv_ref(strides, pads, ld or (1,) * nsp, rd or (1,) * nsp, dn, fgc),
                       ALL, shapes, doms=TINY_INT, tol=_CONV_TOL, differentiable=True,
                       linear=lin))
        add(OpCase("conv_general_dilated_batch_group", "conv_general_dilated",
                   lambda x, w: lax.conv_general_dilated(x, w, (1,), ((1, 0),),
                                                         batch_group_count=2),
                   lambda x, w: np.concatenate(
                       [_conv_ref((1,), ((1, 0),), (1,), (1,), None)(x[2 * g:2 * g + 2],
                                                                     w[2 * g:2 * g + 2])
                        for g in range(2)], axis=1),
                   FLOAT + COMPLEX, (((4, 2, 5), (4, 2, 2)),), doms=SMALL, tol=_CONV_TOL,
                   differentiable=True, linear=(0,), exact_dtypes=False))
        add(OpCase("conv_general_dilated_preferred_int8_int32", "conv_general_dilated",
                   lambda x, w: lax.conv(x, w, (1, 1), "VALID",
                                         preferred_element_type=np.int32),
                   _conv_ref((1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), None), ("int8",),
                   (((1, 2, 4, 4), (3, 2, 2, 2)),), doms=FULL_INT, out_dtype="int32",
                   exact_dtypes=False))

    # (tag, window, strides, padding, base dilation, window dilation, shapes, dtypes, differentiable)
    # JAX differentiates max/min pooling only for real dtypes and without window dilation
    window_cases = (
        ("pool", (2, 2), (2, 2), "VALID", None, None, (((4, 6),), ((0, 6),), ((5, 5),)), True),
        ("general", (2, 3), (1, 2), ((1, 0), (0, 2)), (1, 2), (1, 1), (((4, 5),), ((1, 3),)),
         True),
        ("window_dilation", (2, 2), (1, 1), ((0, 1), (1, 0)), (2, 1), (2, 1), (((3, 4),),),
         False))
    for kind, prim, dts, lin in (("sum", "reduce_window_sum", NUMBER, (0,)),
                                 ("max", "reduce_window_max", ALL, ()),
                                 ("min", "reduce_window_min", ALL, ())):
        if prim not in registry:
            continue
        op = {"sum": lax.add, "max": lax.max, "min": lax.min}[kind]
        for tag, dims, strides, padding, base, wdil, shapes, diff in window_cases:
            pads = padding if not isinstance(padding, str) else ((0, 0), (0, 0))
            chooser = kind != "sum"
            add(OpCase(f"{prim}_{tag}", prim,
                       (lambda k, o, d, s, p, b, w: lambda x: lax.reduce_window(
                           x, _window_init(k, x), o, d, s, p, b, w))(
                           kind, op, dims, strides, padding, base, wdil),
                       _window_ref(kind, dims, strides, pads, base, wdil),
                       tuple(d for d in dts if not (chooser and diff and d in COMPLEX)), shapes,
                       doms=Dom(ilo=-20, ihi=20) if kind == "sum" else SPECIAL_REAL,
                       tol=_WIN_TOL, differentiable=diff or not chooser, linear=lin,
                       exact_dtypes=not (chooser and diff)))
    if "reduce_window" in registry:
        add(OpCase("reduce_window_generic_mul", "reduce_window",
                   lambda x: lax.reduce_window(x, lax.convert_element_type(1, x.dtype), lax.mul,
                                               (2, 2), (1, 2), ((1, 0), (0, 1)), (1, 2)),
                   _window_ref("prod", (2, 2), (1, 2), ((1, 0), (0, 1)), (1, 2)), NUMBER,
                   (((3, 4),), ((0, 4),)), doms=TINY_INT, tol=_WIN_TOL, weak="never"))
    from pyjax._src.primitives import windows as _w
    ge = registry["ge"]
    if "select_and_gather_add" in registry:
        args = ((2, 3), (1, 2), ((1, 0), (0, 2)), (1, 2), (1, 1))
        add(OpCase("select_and_gather_add_ge", "select_and_gather_add",
                   (lambda a: lambda t, x: _w._select_and_gather_add(t, x, ge, *a))(args),
                   _select_gather_ref(*args), FLOAT, (((4, 5), (4, 5)), ((1, 2), (1, 2))),
                   differentiable=True, linear=(0,), exact_dtypes=False))
    if "select_and_scatter_add" in registry:
        add(OpCase("select_and_scatter_add_ge", "select_and_scatter_add",
                   lambda s, x: _w._select_and_scatter_add(s, x, ge, (2, 3), (2, 1),
                                                           ((1, 0), (0, 1))),
                   _select_scatter_ref((2, 3), (2, 1), ((1, 0), (0, 1))), FLOAT,
                   (((2, 4), (4, 5)),), differentiable=True, linear=(0,), tol=_WIN_TOL,
                   exact_dtypes=False))


_conv_window_cases()

# ---------------------------------------------------------------------------------------------
# lax.linalg and lax.fft (inputs made well-conditioned; eigen/singular vectors phase-fixed by
# their first row, so that values and derivatives are well defined; JAX rejects integers with
# TypeError, half precision fails later, at LAPACK, with NotImplementedError)
# ---------------------------------------------------------------------------------------------

def _linalg_cases() -> None:
    import scipy.linalg as sl
    from pyjax.lax import linalg as la
    jnp = pyjax.numpy
    lapack_dts, nonlapack = ("float32", "float64", "complex64", "complex128"), BOOL + INT
    mat = (((3, 3),), ((2, 3, 3),))
    diag_dom = Dom(lo=1.0, hi=2.0)  # triangular factors with |diagonal| >= 1

    def H(x: Any) -> Any:  # noqa: N802
        return np.conj(np.swapaxes(x, -1, -2))

    def phase(v0: Any, conj: Any, absolute: Any) -> Any:
        return conj(v0) / absolute(v0)

    def spd(a: Any) -> Any:
        return jnp.matmul(a, jnp.conj(jnp.swapaxes(a, -1, -2))) + 3 * jnp.eye(a.shape[-1],
                                                                                dtype=a.dtype)

    def np_spd(a: np.ndarray) -> np.ndarray:
        return a @ H(a) + 3 * np.eye(a.shape[-1])

    def eigh_fn(a: Any) -> list:
        v, w = la.eigh(a)
        return [v * phase(v[..., :1, :], jnp.conj, jnp.abs), w]

    def eigh_ref(a: np.ndarray) -> list:
        w, v = np.linalg.eigh((a + H(a)) / 2)
        return [v * phase(v[..., :1, :], np.conj, np.abs), w]

    def svd_fn(a: Any) -> list:
        u, s, vh = la.svd(a, full_matrices=False)
        p = phase(u[..., :1, :], jnp.conj, jnp.abs)
        return [u * p, s, vh * jnp.conj(jnp.swapaxes(p, -1, -2))]

    def svd_ref(a: np.ndarray) -> list:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        p = phase(u[..., :1, :], np.conj, np.abs)
        return [u * p, s, vh * np.conj(np.swapaxes(p, -1, -2))]

    def lu_ref(a: np.ndarray) -> list:
        lu_, piv = sl.lu_factor(a)
        perm = np.arange(a.shape[0])
        for i, j in enumerate(piv):
            perm[[i, j]] = perm[[j, i]]
        return [lu_, piv, perm]

    def qr_ref(mode: str) -> Callable:
        return lambda a: list(np.linalg.qr(a, mode=mode))

    def lapack(name: str, a: np.ndarray) -> Callable:
        return sl.lapack.get_lapack_funcs(name, (a,))

    def householder_ref(a: np.ndarray, taus: np.ndarray) -> np.ndarray:
        return lapack("ungqr" if a.dtype.kind == "c" else "orgqr", a)(a, taus)[0]

    def ormqr_ref(a: np.ndarray, taus: np.ndarray, c: np.ndarray) -> np.ndarray:
        v = np.zeros((a.shape[0],) * 2, a.dtype)
        v[:, :a.shape[1]] = a
        return H(householder_ref(v, taus)) @ c

    def triangular_ref(left: bool, lower: bool, trans: bool, conj: bool, unit: bool
                       ) -> Callable:
        def ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            t = np.tril(a) if lower else np.triu(a)
            if unit:
                t = t - np.diag(np.diag(t)) + np.eye(t.shape[0])
            t = np.conj(t) if conj else t
            t = t.T if trans else t
            return np.linalg.solve(t, b) if left else np.linalg.solve(t.T, b.T).T
        return ref

    def cholesky_update_ref(r: np.ndarray, w: np.ndarray) -> np.ndarray:
        r = np.triu(r)
        return np.linalg.cholesky(r.T @ r + np.outer(w, w)).T

    def tridiagonal_solve_ref(dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray
                              ) -> np.ndarray:
        out = np.empty(b.shape, np.result_type(dl, b))
        for i in np.ndindex(*d.shape[:-1]):
            a = np.diag(d[i]) + np.diag(dl[i][1:], -1) + np.diag(du[i][:-1], 1)
            out[i] = np.linalg.solve(a, b[i])
        return out

    # cholesky and eigh symmetrize with a true division: integers become floats (as in JAX)
    add(OpCase("cholesky", "cholesky", lambda a: la.cholesky(spd(a)),
               lambda a: np.linalg.cholesky(np_spd(a)), lapack_dts, mat, weak="never",
               rejects=(), differentiable=True))
    for name, kw, shapes, lin in (
            ("left_lower", dict(left_side=True, lower=True), (((3, 3), (3, 2)),
                                                             ((2, 3, 3), (2, 3, 4))), (1,)),
            ("right_upper_transpose_conj", dict(lower=False, transpose_a=True, conjugate_a=True),
             (((3, 3), (2, 3)),), (1,)),
            ("left_unit_transpose", dict(left_side=True, lower=True, transpose_a=True,
                                         unit_diagonal=True), (((3, 3), (3, 4)),), (1,))):
        ref = triangular_ref(kw.get("left_side", False), kw["lower"],
                             kw.get("transpose_a", False), kw.get("conjugate_a", False),
                             kw.get("unit_diagonal", False))
        add(OpCase(f"triangular_solve_{name}", "triangular_solve",
                   (lambda k: lambda a, b: la.triangular_solve(a, b, **k))(kw), ref,
                   INEXACT, shapes, doms=(diag_dom, DEFAULT), rejects=nonlapack,
                   tol_scale=100, differentiable=True, linear=lin))
    add(OpCase("qr", "qr", lambda a: list(la.qr(a)), qr_ref("complete"), lapack_dts,
               (((4, 3),), ((3, 4),), ((2, 3, 3),)), multiple=True, rejects=nonlapack,
               tol_scale=100, differentiable=True))
    add(OpCase("qr_reduced", "qr", lambda a: list(la.qr(a, full_matrices=False)),
               qr_ref("reduced"), lapack_dts, (((4, 3),), ((3, 4),)), multiple=True,
               rejects=nonlapack, tol_scale=100, differentiable=True))
    add(OpCase("eigh", "eigh", eigh_fn, eigh_ref, lapack_dts, mat, multiple=True,
               out_dtype=lambda d: (d, {"complex64": "float32",
                                        "complex128": "float64"}.get(d, d)),
               rejects=(), tol_scale=100, differentiable=True))
    add(OpCase("svd", "svd", svd_fn, svd_ref, lapack_dts, (((4, 3),), ((3, 4),), ((2, 3, 3),)),
               multiple=True, out_dtype=lambda d: (d, {"complex64": "float32",
                                                       "complex128": "float64"}.get(d, d), d),
               rejects=nonlapack, tol_scale=100, differentiable=True))
    add(OpCase("svd_values", "svd", lambda a: la.svd(a, compute_uv=False),
               lambda a: np.linalg.svd(a, compute_uv=False), lapack_dts, (((4, 3),), ((3, 3),)),
               out_dtype=lambda d: {"complex64": "float32", "complex128": "float64"}.get(d, d),
               rejects=nonlapack, tol_scale=100, differentiable=True))
    add(OpCase("lu", "lu", lambda a: list(la.lu(a)), lu_ref, lapack_dts, (((3, 3),), ((4, 4),)),
               multiple=True, out_dtype=lambda d: (d, "int32", "int32"), rejects=nonlapack,
               tol_scale=100, differentiable=True))
    add(OpCase("lu_pivots_to_permutation", "lu_pivots_to_permutation",
               lambda p: la.lu_pivots_to_permutation(p, 5), lambda p: lu_ref_perm(p, 5),
               ("int32",), (((3,),), ((2, 4),)), doms=Dom(ilo=0, ihi=4)))
    add(OpCase("eig_values", "eig", lambda a: la.eig(a, compute_left_eigenvectors=False,
                                                     compute_right_eigenvectors=False)[0],
               lambda a: np.linalg.eigvals(a), lapack_dts, (((3, 3),),),
               out_dtype=lambda d: {"float32": "complex64", "float64": "complex128"}.get(d, d),
               rejects=nonlapack, tol_scale=100))  # order 2 fails in JAX too (eigvec rule)
    add(OpCase("schur_reconstruct", "schur",
               lambda a: (lambda t, q: jnp.matmul(jnp.matmul(q, t), jnp.conj(q.T)))(
                   *la.schur(a)), lambda a: a, lapack_dts, (((4, 4),),),
               rejects=nonlapack, tol_scale=100))
    from pyjax._src.primitives import linalg as linalg_prims  # geqrf, geqp3: no public name
    add(OpCase("geqrf", "geqrf", lambda a: list(linalg_prims.geqrf(a)),
               lambda a: list(lapack("geqrf", a)(a)[:2]), lapack_dts, (((4, 3),), ((3, 4),)),
               multiple=True, rejects=nonlapack, tol_scale=100))
    add(OpCase("geqp3", "geqp3", lambda a, p: list(linalg_prims.geqp3(a, p)),
               lambda a, p: [*(lambda r: (r[0], r[1].astype(np.int32), r[2]))(
                   lapack("geqp3", a)(a)[:3])], lapack_dts, (((4, 3), (3,)),),
               doms=(DEFAULT, Dom(ilo=0, ihi=0)), arg_dtypes=(None, "int32"), multiple=True,
               out_dtype=lambda d: (d, "int32", d), rejects=nonlapack, tol_scale=100))
    add(OpCase("hessenberg", "hessenberg", lambda a: list(la.hessenberg(a)),
               lambda a: list(lapack("gehrd", a)(a)[:2]), lapack_dts, (((4, 4),),),
               out_dtype=lambda d: (d, d), multiple=True, rejects=nonlapack, tol_scale=100))
    add(OpCase("tridiagonal", "tridiagonal", lambda a: list(la.tridiagonal(a)),
               lambda a: list(lapack("hetrd" if a.dtype.kind == "c" else "sytrd", a)(a, lower=1)[:4]),
               lapack_dts, (((4, 4),),), multiple=True, rejects=nonlapack, tol_scale=100,
               out_dtype=lambda d: (d,) + ({"complex64": "float32",
                                            "complex128": "float64"}.get(d, d),) * 2 + (d,)))
    add(OpCase("householder_product", "householder_product",
               lambda a, t: la.householder_product(a, t), householder_ref, lapack_dts,
               (((4, 3), (2,)), ((3, 3), (3,))), rejects=nonlapack, tol_scale=100))
    add(OpCase("ormqr", "ormqr", lambda a, t, c: la.ormqr(a, t, c, transpose=True), ormqr_ref,
               lapack_dts, (((4, 3), (3,), (4, 2)),), rejects=nonlapack, tol_scale=100))
    add(OpCase("symmetric_product", "symmetric_product",
               lambda a, c: la.symmetric_product(a, c, alpha=2.0, beta=0.5),
               lambda a, c: 2.0 * a @ a.T + 0.5 * c, FLOAT, (((3, 2), (3, 3)),), tol=RED_TOL))
    add(OpCase("cholesky_update", "cholesky_update",
               lambda r, w: la.cholesky_update(jnp.triu(r), w), cholesky_update_ref,
               ("float32", "float64"), (((3, 3), (3,)),), doms=(diag_dom, DEFAULT),
               rejects=nonlapack + COMPLEX, tol_scale=100))
    add(OpCase("tridiagonal_solve", "tridiagonal_solve",
               lambda dl, d, du, b: la.tridiagonal_solve(dl, d, du, b), tridiagonal_solve_ref,
               lapack_dts, (((4,), (4,), (4,), (4, 2)), ((2, 3), (2, 3), (2, 3), (2, 3, 1))),
               doms=(DEFAULT, Dom(lo=7.0, hi=9.0), DEFAULT, DEFAULT), rejects=nonlapack,
               tol_scale=100, differentiable=True, linear=(3,)))
    for name, typ, dts, ref, shapes in (
            ("fft", 0, COMPLEX, lambda x: np.fft.fftn(x, axes=(-2, -1)), (((2, 3, 4),),)),
            ("ifft", 1, COMPLEX, lambda x: np.fft.ifft(x), (((3, 5),),)),
            ("rfft", 2, ("float32", "float64"), lambda x: np.fft.rfft(x), (((3, 6),), ((5,),))),
            ("irfft", 3, COMPLEX, lambda x: np.fft.irfft(x, 6), (((3, 4),),))):
        lengths = {"fft": (3, 4), "ifft": (5,), "rfft": None, "irfft": (6,)}[name]
        add(OpCase(f"fft_{name}", "fft",
                   (lambda t, n: lambda x: bind("fft", x, fft_type=lax.FftType(t),
                                                fft_lengths=n or x.shape[-1:]))(typ, lengths),
                   ref, dts, shapes, exact_dtypes=False, linear=(0,), differentiable=True,
                   out_dtype={"rfft": lambda d: "complex64" if d == "float32" else "complex128",
                              "irfft": lambda d: "float32" if d == "complex64" else "float64"
                              }.get(name)))


def lu_ref_perm(pivots: np.ndarray, size: int) -> np.ndarray:
    """The permutation LU's row swaps `pivots` make (batched over leading axes)."""
    out = np.empty((*pivots.shape[:-1], size), np.int32)
    for idx in np.ndindex(*pivots.shape[:-1]):
        perm = np.arange(size)
        for i, j in enumerate(pivots[idx]):
            perm[[i, j]] = perm[[j, i]]
        out[idx] = perm
    return out


if "cholesky" in registry:
    _linalg_cases()

# ---------------------------------------------------------------------------------------------
# miscellaneous lax primitives (top_k, approx_top_k, generic reduce, rng, barrier, composite)
# ---------------------------------------------------------------------------------------------

def _top_k_ref(k: int, axis: int, largest: bool = True) -> Callable[[np.ndarray], list]:
    """Values and indices of the k largest (smallest) along `axis`, ties by lower index."""
    def ref(x: np.ndarray) -> list:
        key = np.moveaxis(x, axis, -1)
        wide = key.astype(np.float64)  # small values: exact
        order = np.argsort(-wide if largest else wide, axis=-1, kind="stable")[..., :k]
        vals = np.take_along_axis(key, order, -1)
        return [np.moveaxis(vals, -1, axis), np.moveaxis(order, -1, axis)]
    return ref


def _philox_ref(key: np.ndarray, count: int) -> list[int]:
    """XLA's Philox bits in Python integers: key word 0 keys Philox-4x32-10, the 128-bit
    counter is (word 1 + i, word 0), four outputs per counter (Random123's constants)."""
    mask = 0xFFFFFFFF
    words = [int(w) for w in key]
    w0, w1 = words[0] | words[1] << 32, words[2] | words[3] << 32
    out = []
    for i in range((count + 3) // 4):
        low = (w1 + i) & (2 ** 64 - 1)
        high = (w0 + (low < w1)) & (2 ** 64 - 1)
        x = [low & mask, low >> 32, high & mask, high >> 32]
        k = [w0 & mask, w0 >> 32]
        for _ in range(10):
            p0, p1 = 0xD2511F53 * x[0], 0xCD9E8D57 * x[2]
            x = [(p1 >> 32) ^ x[1] ^ k[0], p1 & mask, (p0 >> 32) ^ x[3] ^ k[1], p0 & mask]
            k = [(k[0] + 0x9E3779B9) & mask, (k[1] + 0xBB67AE85) & mask]
        out += x
    return out[:count]


def _rbg_ref(key: np.ndarray) -> list[np.ndarray]:
    new = key.copy()
    new[2:] = np.array([(int(key[2]) | int(key[3]) << 32) + 2], np.uint64).view(np.uint32)
    return [new, np.array(_philox_ref(key, 6), np.uint32).reshape(2, 3)]


def _misc_cases() -> None:
    from pyjax._src.primitives.effects import optimization_barrier
    for name, fn, ref, shapes in (
            ("top_k_last", lambda x: lax.top_k(x, 2), _top_k_ref(2, 1),
             (((3, 5),), ((4, 2),))),
            ("top_k_axis0", lambda x: lax.top_k(x, 3, axis=0), _top_k_ref(3, 0),
             (((4, 3),), ((3,),)))):
        for part, dts in ((0, ORDERED), (1, ORDERED)):
            add(OpCase(f"{name}_{'values' if part == 0 else 'indices'}", "top_k",
                       (lambda f, p: lambda x: f(x)[p])(fn, part),
                       (lambda r, p: lambda x: r(x)[p])(ref, part), dts, shapes,
                       doms=Dom(unique=True, ilo=-50, ihi=50), native_ref=True,
                       out_dtype=None if part == 0 else "int32",
                       weak="all" if part == 0 else "never", differentiable=part == 0,
                       rejects=()))
    for name, fn, largest in (("approx_max_k", lax.approx_max_k, True),
                              ("approx_min_k", lax.approx_min_k, False)):
        for part in (0, 1):
            add(OpCase(f"{name}_{'values' if part == 0 else 'indices'}", "approx_top_k",
                       (lambda f, p: lambda x: f(x, 2)[p])(fn, part),
                       (lambda r, p: lambda x: r(x)[p])(_top_k_ref(2, 1, largest), part),
                       FLOAT, (((3, 6),), ((1, 2),)), native_ref=True,
                       out_dtype=None if part == 0 else "int32",
                       weak="all" if part == 0 else "never", differentiable=part == 0,
                       rejects=()))
    add(OpCase("reduce_generic_product", "reduce",
               lambda x: lax.reduce(x, np.ones((), x.dtype), lambda a, b: a * b, (1,)),
               lambda x: np.prod(x, axis=1), NUMBER, (((3, 5),), ((2, 0),), ((4, 1),)),
               doms=TINY_INT, tol=RED_TOL, weak="never", differentiable=True,
               exact_dtypes=False))
    add(OpCase("reduce_generic_pytree", "reduce",
               lambda x, y: list(lax.reduce(
                   {"m": x, "s": y}, {"m": np.full((), -np.inf, x.dtype), "s": np.zeros((), y.dtype)},
                   lambda a, b: {"m": lax.max(a["m"], b["m"]), "s": a["s"] + b["s"]},
                   (0, 2)).values()),
               lambda x, y: [np.max(x, axis=(0, 2)), np.sum(y, axis=(0, 2))], FLOAT,
               (((2, 3, 4), (2, 3, 4)), ((3, 1, 5), (3, 1, 5))), tol=RED_TOL, weak="never",
               multiple=True, differentiable=True, exact_dtypes=False))
    for part, weak in ((0, "all"), (1, "never")):  # the new key keeps the key's weak type
        add(OpCase(f"rng_bit_generator_philox_{('key', 'bits')[part]}", "rng_bit_generator",
                   (lambda p: lambda k: lax.rng_bit_generator(k, (2, 3))[p])(part),
                   (lambda p: lambda k: _rbg_ref(k)[p])(part), ("uint32",), (((4,),),),
                   doms=FULL_INT, weak=weak, exact_dtypes=False))
    add(OpCase("rng_uniform_one_value_range", "rng_uniform",
               lambda a: lax.rng_uniform(a, lax.add(a, lax.full_like(a, 1)), (3,)),
               lambda a: np.broadcast_to(a, (3,)),
               INT, (((),),), exact_dtypes=False))
    add(OpCase("empty", "empty", lambda dtype: lax.empty((2, 3), DTYPES[dtype]),
               lambda dtype: np.zeros((2, 3)), ALL, ((),), pass_dtype=True, weak="never"))
    add(OpCase("stage", "stage", lax.stage, lambda x: x, ALL, UNARY_SHAPES, doms=FULL_INT,
               native_ref=True, linear=(0,), differentiable=True,
               binds=lambda d: False))  # as in JAX, staging a value adds no equation
    add(OpCase("optimization_barrier", "optimization_barrier",
               lambda x, y: list(optimization_barrier((x, y))), lambda x, y: [x, y], ALL,
               (((2, 3), ()), ((0,), (4,))), doms=FULL_INT, native_ref=True, weak="each",
               multiple=True, linear=(0, 1), differentiable=True))
    add(OpCase("dce_sink", "dce_sink", lambda x: bind("dce_sink", x, prevent_mlir_dce=False),
               lambda x: [], ALL, UNARY_SHAPES, multiple=True))
    add(OpCase("composite", "composite",
               lambda x: lax.composite(lambda v: lax.mul(lax.sin(v), lax.cos(v)),
                                       name="my.sin_cos")(x),
               lambda x: np.sin(x) * np.cos(x), FLOAT, UNARY_SHAPES, tol_scale=10,
               exact_dtypes=False))


if "top_k" in registry:
    _misc_cases()


# ---------------------------------------------------------------------------------------------
# ragged_dot_general and scaled_dot (pyjax/_src/primitives/ragged_dot.py).  Each ragged entry
# holds one dot operand fixed, so it is linear in the other; group sizes are int32 operands.
# ---------------------------------------------------------------------------------------------

def _ragged_rows_ref(lhs: np.ndarray, rhs: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """[m, k] x [g, k, n] by rows: row r gets lhs[r] @ rhs[g] for each group g holding it."""
    out = np.zeros((lhs.shape[0], rhs.shape[2]), np.result_type(lhs, rhs, np.float64))
    ends = np.cumsum(sizes)
    for r in range(lhs.shape[0]):
        for g, (s, e) in enumerate(zip(ends - sizes, ends)):
            if s <= r < e:
                out[r] += lhs[r] @ rhs[g]
    return out


def _ragged_cases() -> None:
    rd = lax.RaggedDotDimensionNumbers
    fixed = np.random.default_rng(11).integers(0, 3, (2, 3, 4)).astype(np.float64)
    sizes = Dom(ilo=0, ihi=4)
    add(OpCase("ragged_dot_lhs", "ragged_dot_general",
               lambda x, g: lax.ragged_dot(x, fixed.astype(x.dtype), g),
               lambda x, g: _ragged_rows_ref(x, fixed.astype(x.dtype), g), BOOL + NUMBER,
               (((6, 3), (2,)), ((0, 3), (2,))), doms=(TINY_INT, sizes),
               arg_dtypes=(None, "int32"), tol=DOT_TOL, weak="never", linear=(0,),
               differentiable=True))
    fixed_lhs = np.random.default_rng(12).integers(0, 3, (5, 3)).astype(np.float64)
    add(OpCase("ragged_dot_rhs", "ragged_dot_general",
               lambda y, g: lax.ragged_dot(fixed_lhs.astype(y.dtype), y, g),
               lambda y, g: _ragged_rows_ref(fixed_lhs.astype(y.dtype), y, g), BOOL + NUMBER,
               (((3, 3, 2), (3,)),), doms=(TINY_INT, sizes), arg_dtypes=(None, "int32"),
               tol=DOT_TOL, weak="never", linear=(0,)))  # its order-2 reverse needs the
    # transpose of contracting mode, which JAX 0.10.2 does not implement
    contracting = rd((([1], [0]), ([], [])), [1], [])
    fixed_k = np.random.default_rng(13).integers(0, 3, (5, 2)).astype(np.float64)

    def contracting_ref(x: np.ndarray, g: np.ndarray) -> np.ndarray:
        ends, k = np.cumsum(g), fixed_k.astype(x.dtype)
        return np.stack([x[:, s:e] @ k[s:e] if e > s else np.zeros((x.shape[0], 2))
                         for s, e in zip(np.maximum(ends - g, 0), np.minimum(ends, 5))])
    add(OpCase("ragged_dot_general_contracting", "ragged_dot_general",
               lambda x, g: lax.ragged_dot_general(x, fixed_k.astype(x.dtype), g, contracting),
               contracting_ref, BOOL + NUMBER, (((3, 5), (3,)),), doms=(TINY_INT, sizes),
               arg_dtypes=(None, "int32"), tol=DOT_TOL, weak="never"))
    bf16 = DTYPES["bfloat16"]
    add(OpCase("scaled_dot_f32", "scaled_dot",
               lambda x, y: lax.scaled_dot(x, y, preferred_element_type=np.float32),
               lambda x, y: (x.astype(bf16).astype(np.float64)
                             @ y.astype(bf16).astype(np.float64)),
               BOOL + INT + FLOAT, (((3, 4), (4, 2)), ((2, 3, 6), (2, 6, 1))), doms=TINY_INT,
               out_dtype="float32", weak="never", exact_dtypes=False))


if "ragged_dot_general" in registry:
    _ragged_cases()


# ---------------------------------------------------------------------------------------------
# jnp.fft and jnp.convolve/correlate (pyjax/_src/numpy/fft.py, signal.py) through the
# primitives they stage: the crops, pads, axis moves and norms around lax.fft and the
# one-channel conv_general_dilated.
# ---------------------------------------------------------------------------------------------

def _numpy_fft_signal_cases() -> None:
    jnp = pyjax.numpy

    def inside_jit(dtype: str) -> bool:
        return False  # the primitive is staged inside jit[name=fft] / jit[name=_conv]

    add(OpCase("jnp_fft_fftn_axes_ortho", "fft",
               lambda x: jnp.fft.fftn(x, s=(3, 5), axes=(0, 2), norm="ortho"),
               lambda x: np.fft.fftn(x, s=(3, 5), axes=(0, 2), norm="ortho"), COMPLEX,
               (((2, 3, 4),),), exact_dtypes=False, linear=(0,), differentiable=True,
               weak="never", binds=inside_jit))
    add(OpCase("jnp_fft_irfft_forward", "fft",
               lambda x: jnp.fft.irfft(x, n=7, axis=0, norm="forward"),
               lambda x: np.fft.irfft(x, n=7, axis=0, norm="forward"), COMPLEX,
               (((4, 3),),), exact_dtypes=False, linear=(0,), differentiable=True,
               out_dtype=lambda d: "float32" if d == "complex64" else "float64",
               weak="never", binds=inside_jit))
    add(OpCase("jnp_convolve_same", "conv_general_dilated",
               lambda a, v: jnp.convolve(a, v, "same"), lambda a, v: np.convolve(a, v, "same"),
               ("float32", "float64") + COMPLEX, (((7,), (3,)), ((2,), (5,))), doms=SMALL,
               tol=_CONV_TOL, differentiable=True, linear=(0,), exact_dtypes=False,
               binds=inside_jit))
    add(OpCase("jnp_correlate_full", "conv_general_dilated",
               lambda a, v: jnp.correlate(a, v, "full"),
               lambda a, v: np.correlate(a, v, "full"), ("float32", "float64") + COMPLEX,
               (((6,), (4,)),), doms=SMALL, tol=_CONV_TOL, differentiable=True, linear=(0,),
               exact_dtypes=False, binds=inside_jit))


if "fft" in registry and "conv_general_dilated" in registry:
    _numpy_fft_signal_cases()


# ---------------------------------------------------------------------------------------------
# jnp statistics (pyjax/_src/numpy/statistics.py, nan_reductions.py) through the primitives
# they stage inside their jit equations: sort for quantiles, reduce_sum for the NaN-ignoring
# and weighted means, cumsum for cumulative_sum, dot_general for cov.
# ---------------------------------------------------------------------------------------------

def _numpy_statistics_cases() -> None:
    jnp = pyjax.numpy

    def inside_jit(dtype: str) -> bool:
        return False  # staged inside jit[name=quantile] / jit[name=nanvar] / ...

    floats = ("float32", "float64")
    add(OpCase("jnp_quantile_linear", "sort",
               lambda x: jnp.quantile(x, np.array([0.25, 0.6], x.dtype), axis=1),
               lambda x: np.quantile(x, [0.25, 0.6], axis=1), floats, (((3, 5),),),
               differentiable=True, exact_dtypes=False, weak="never", binds=inside_jit))
    add(OpCase("jnp_median", "sort", lambda x: jnp.median(x, axis=0),
               lambda x: np.median(x, axis=0), floats, (((4, 3),),), differentiable=True,
               exact_dtypes=False, weak="never", binds=inside_jit))
    add(OpCase("jnp_nanvar", "reduce_sum", lambda x: jnp.nanvar(x, axis=1, ddof=1),
               lambda x: np.nanvar(x, axis=1, ddof=1), floats, (((3, 4),),),
               differentiable=True, exact_dtypes=False, weak="never", binds=inside_jit))
    add(OpCase("jnp_average_weighted", "reduce_sum",
               lambda x, w: jnp.average(x, axis=1, weights=w),
               lambda x, w: np.average(x, axis=1, weights=w), floats, (((2, 4), (4,)),),
               doms=(DEFAULT, POSITIVE), differentiable=True, exact_dtypes=False,
               weak="never"))
    add(OpCase("jnp_cumulative_sum_initial", "cumsum",
               lambda x: jnp.cumulative_sum(x, axis=1, include_initial=True),
               lambda x: np.cumulative_sum(x, axis=1, include_initial=True), floats,
               (((2, 3),),), differentiable=True, linear=(0,), exact_dtypes=False,
               weak="never", binds=inside_jit))
    add(OpCase("jnp_cov", "dot_general", lambda x: jnp.cov(x), lambda x: np.cov(x), floats,
               (((3, 5),),), differentiable=True, exact_dtypes=False, weak="never",
               binds=inside_jit))


if "sort" in registry and "cumsum" in registry:
    _numpy_statistics_cases()

# ---------------------------------------------------------------------------------------------
# jax.nn's scaled_matmul_wrapper (pyjax/_src/nn/scaled.py): block-scaled (B, M, K) x (B, N, K),
# each operand times its scales repeated over blocks of K; no derivative rule (as in JAX)
# ---------------------------------------------------------------------------------------------

def _nn_scaled_matmul_cases() -> None:
    from pyjax._src.nn.scaled import scaled_matmul_wrapper_p

    def ref(a: np.ndarray, b: np.ndarray, sa: np.ndarray, sb: np.ndarray) -> np.ndarray:
        wide = [t.astype(np.float64) for t in (a, b, sa, sb)]
        return np.einsum("bmk,bnk->bmn", wide[0] * np.repeat(wide[2], 2, -1),
                         wide[1] * np.repeat(wide[3], 2, -1))

    add(OpCase("scaled_matmul_wrapper", "scaled_matmul_wrapper",
               lambda a, b, sa, sb: scaled_matmul_wrapper_p.bind(
                   a, b, sa, sb, preferred_element_type=np.dtype(np.float32))[0],
               ref, ("float32", "bfloat16", "float16"),
               (((2, 3, 4), (2, 5, 4), (2, 3, 2), (2, 5, 2)),), out_dtype="float32",
               weak="never", exact_dtypes=False))


_nn_scaled_matmul_cases()

#: name -> entry
BY_NAME: dict[str, OpCase] = {c.name: c for c in OPS}
#: primitive name -> its entries
BY_PRIM: dict[str, list[OpCase]] = {}
for _c in OPS:
    BY_PRIM.setdefault(_c.prim, []).append(_c)


def linear_primitives() -> set[str]:
    """Primitives linear in some operand (these need a transpose rule)."""
    return {c.prim for c in OPS if c.linear}
