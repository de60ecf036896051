"""LLVM IR for one fused cluster: a vectorised loop over a (rows, cols) view of its shape.

The cluster's shape S splits at axis k into R = prod(S[:k]) rows and C = prod(S[k:]) columns;
every operand is FULL (one element per (r, c)), ROW (one per row), COL (one per column) or
SCALAR, and the optional reduction folds the columns of each row (k is where its axes start)
or, over leading axes, the rows into each column's total (k is where they end; the columns go
in blocks whose totals stay in cache).  The loop body works on W-lane vectors; the last
partial vector of a row uses masked loads and stores, around the same computation (written
once).  float32 transcendentals are XLA's own code (tier1/xla_math.py), float64 ones libmvec's.
A sum of rows shorter than _accumulation.LONG follows NumPy's pairwise order in the operand's
dtype (tier 0's bits); longer rows accumulate in double per lane (tier 0 sums them in float64
too).  Over leading axes NumPy adds row after row into the totals, and so does the kernel, in
the operand's dtype below LONG rows and in double from there (tier 0's bits either way).

`kernel_ir(cluster, isa)` gives (IR text, Layout), or raises Unsupported naming the reason.
The kernel's C signature is `void kernel(int64 R, int64 C, void **pointers)`, pointers being
the layout's inputs then outputs.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import struct
from typing import Any, Callable

import numpy as np

from pyjax._src.core.jaxpr import Literal
from pyjax._src.primitives._accumulation import LONG

F32, F64, BOOL = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.bool_)
#: integers: two's complement words, wrapping as XLA's and NumPy's do
INTS = frozenset(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8,
                                       np.uint16, np.uint32, np.uint64))
_LLVM = {F32: "float", F64: "double", BOOL: "i1", **{d: f"i{8 * d.itemsize}" for d in INTS}}
_STORE = {**_LLVM, BOOL: "i8"}
_SIZE = {F32: 4, F64: 8, BOOL: 1, **{d: d.itemsize for d in INTS}}


class Unsupported(Exception):
    """The cluster has something tier 1 does not compile (the message says what)."""


@dataclasses.dataclass(frozen=True)
class Isa:
    """The host's vector width (lanes of float32) and libmvec's name prefix for it."""

    lanes: int    # W: lanes per vector in the kernel loop
    prefix: str   # _ZGVd (AVX2), _ZGVe (AVX-512), _ZGVb (SSE)
    parallel: bool = False  # libgomp is loaded: kernels may split over threads


@dataclasses.dataclass
class Layout:
    """How the wrapper passes buffers: (input index, kind) per pointer, then the outputs."""

    split: int                 # k
    inputs: list[tuple[int, str]]
    outputs: list[Any]         # cluster outputs in order (the reduction's result included)
    # per output: stored nontemporally (its buffer must start at a STREAM_ALIGN boundary)
    streamed: list[bool] = dataclasses.field(default_factory=list)


#: outputs at least this large are written with nontemporal stores: they leave the cache
#: anyway, and a plain store first reads each line in (a 16 MB output of x * 2 on this 2-core
#: EPYC: 2.5 ms plain, 1.85 nontemporal)
STREAM_BYTES = 1 << 23
#: where a streamed output's buffer starts (its rows' full steps are then aligned stores)
STREAM_ALIGN = 64


#: one-argument libmvec functions (glibc names) by primitive
_MVEC1 = {"exp": "exp", "log": "log", "log1p": "log1p", "expm1": "expm1", "tanh": "tanh",
          "sin": "sin", "cos": "cos", "tan": "tan", "atan": "atan", "asin": "asin",
          "acos": "acos", "sinh": "sinh", "cosh": "cosh", "asinh": "asinh", "acosh": "acosh",
          "atanh": "atanh", "cbrt": "cbrt"}
#: what XLA's function gives for a subnormal x (tier 0 matches: primitives/elementwise.py)
_TINY_RESULT = {"sin": "x", "tan": "x", "tanh": "x", "atan": "x", "expm1": "x",
                "sinh": "0", "asin": "0", "asinh": "0", "atanh": "0", "log1p": "0"}
_MVEC2 = {"pow": "pow", "atan2": "atan2"}
_ARITH = {"add": "fadd", "add_any": "fadd", "sub": "fsub", "mul": "fmul", "div": "fdiv"}
_CMP = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
_INTRINSIC1 = {"abs": "fabs", "sqrt": "sqrt", "floor": "floor", "ceil": "ceil"}
_BOOL_OPS = {"and": "and", "or": "or", "xor": "xor"}
#: on integers: wrapping arithmetic, bitwise ops, and comparisons signed or not by dtype
_INT_ARITH = {"add": "add", "add_any": "add", "sub": "sub", "mul": "mul", **_BOOL_OPS}
_INT_CMP = {"eq": ("eq", "eq"), "ne": ("ne", "ne"), "lt": ("slt", "ult"), "le": ("sle", "ule"),
            "gt": ("sgt", "ugt"), "ge": ("sge", "uge")}
_SHIFTS = {"shift_left": "shl", "shift_right_logical": "lshr", "shift_right_arithmetic": "ashr"}
INT_OPS = frozenset({*_INT_ARITH, *_INT_CMP, *_SHIFTS, "neg", "not", "abs", "max", "min",
                     "select_n", "convert_element_type", "bitcast_convert_type",
                     "broadcast_in_dim", "transpose"})
SUPPORTED = frozenset({*_MVEC1, *_MVEC2, *_ARITH, *_CMP, *_INTRINSIC1, *_BOOL_OPS, *INT_OPS,
                       "exp2", "square", "rsqrt", "logistic", "sign", "integer_pow",
                       "fused_multiply_add", "is_finite", "clamp", "erf_inv", "erf", "erfc",
                       "reduce_sum", "reduce_max", "reduce_min"})


def _const(value: Any, dtype: np.dtype) -> str:
    if dtype == BOOL:
        return "true" if bool(value) else "false"
    if dtype in INTS:  # LLVM reads integer literals as signed
        return str(int(np.asarray(value, dtype).view(f"i{dtype.itemsize}")))
    bits = struct.unpack("<Q", struct.pack("<d", float(np.asarray(value, dtype))))[0]
    return f"0x{bits:016X}"


def _kind(shape: tuple, full: tuple, k: int) -> str | None:
    """FULL/ROW/COL/SCALAR for a value of `shape` (same rank as `full`, size-1 axes
    broadcast) in the split at k, or None."""
    if math.prod(shape) == 1:
        return "SCALAR"
    lead = all(s == f for s, f in zip(shape[:k], full[:k]))
    trail = all(s == f for s, f in zip(shape[k:], full[k:]))
    lead1 = all(s == 1 for s in shape[:k])
    trail1 = all(s == 1 for s in shape[k:])
    if lead and trail:
        return "FULL"
    if lead and trail1:
        return "ROW"
    if lead1 and trail:
        return "COL"
    return None


def _expanded(eqn: Any) -> tuple:
    """A broadcast_in_dim operand's shape, placed in the output's rank."""
    out = [1] * len(eqn.params["shape"])
    for d, size in zip(eqn.params["broadcast_dimensions"], eqn.invars[0].aval.shape):
        out[d] = size
    return tuple(out)


def _uses(cluster: Any) -> list[tuple[Any, tuple]]:
    """(input, shape in the cluster's rank) for every use of a cluster input."""
    uses = []
    inputs = set(a for a in cluster.inputs)
    for e in cluster.eqns:
        if e.primitive.name == "broadcast_in_dim":
            dims = tuple(e.params["broadcast_dimensions"])
            if dims != tuple(sorted(dims)):
                raise Unsupported("broadcast_in_dim that reorders axes")
            if e.invars[0] in inputs:
                uses.append((e.invars[0], _expanded(e)))
            continue
        if e.primitive.name == "transpose":  # read transposed: a TRANS source of its own
            continue
        for a in e.invars:
            if a in inputs:
                shape = tuple(a.aval.shape)
                if shape and len(shape) != len(cluster.shape):
                    raise Unsupported("an operand of another rank")
                uses.append((a, shape if shape else (1,) * len(cluster.shape)))
    return uses


def _split(cluster: Any, rows: int | None = None) -> tuple[int, bool]:
    """(k, leading): where the shape splits into rows and columns, and whether the reduction
    folds the rows (leading axes, one total per column) instead of each row's columns; a row
    group's member splits after its `rows` leading axes."""
    n = len(cluster.shape)
    red = cluster.reduction
    uses = _uses(cluster)
    leading = False
    if red is not None:
        axes = sorted(red.params["axes"])
        if axes == list(range(n - len(axes), n)):
            candidates = [n - len(axes)]
        elif axes == list(range(len(axes))):
            # with one column left NumPy sums it as one contiguous run (pairwise): a full
            # reduction; otherwise it adds the rows into the columns' totals one by one
            leading = math.prod(cluster.shape[len(axes):]) != 1
            candidates = [len(axes) if leading else 0]
        else:
            raise Unsupported("a reduction over axes neither leading nor trailing")
    else:
        candidates = list(range(n + 1))
    if any(e.primitive.name == "transpose" for e in cluster.eqns):
        # a transposed operand is gathered along a row's columns: the last axis alone
        candidates = [k for k in candidates if k == n - 1]
    if rows is not None:
        if leading or rows not in candidates:
            raise Unsupported("a group member that does not split after the group's rows")
        candidates = [rows]
    for k in candidates:
        if all(_kind(shape, cluster.shape, k) for _, shape in uses):
            return k, leading
    raise Unsupported("operands broadcast along both rows and columns")


def _check_types(cluster: Any) -> None:
    for e in cluster.eqns:
        name = e.primitive.name
        if name not in SUPPORTED:
            raise Unsupported(f"{name} has no native code")
        for v in (*e.invars, *e.outvars):
            dtype = v.aval.dtype  # extended dtypes (PRNG keys, float0) are no NumPy dtype
            if not isinstance(dtype, np.dtype) or dtype not in _LLVM:
                raise Unsupported(f"dtype {dtype}")
        if name == "select_n" and (len(e.invars) != 3 or e.invars[0].aval.dtype != BOOL):
            raise Unsupported("select_n with an integer predicate")
        if name not in INT_OPS and any(v.aval.dtype in INTS for v in (*e.invars, *e.outvars)):
            raise Unsupported(f"{name} of integers")
        if name == "bitcast_convert_type" and BOOL in (e.invars[0].aval.dtype,
                                                       e.outvars[0].aval.dtype):
            raise Unsupported("bitcast_convert_type of booleans")
        if name == "atan":  # XLA's code for it depends on the array's shape (tier 0 knows)
            raise Unsupported("atan (glibc's atanf or XLA's scalar code, by position)")
        if name in ("erf_inv", "erf", "erfc") and e.invars[0].aval.dtype != F32:
            # (float64: XLA calls glibc's erf, tier 0 SciPy's; both sides run tier 0's)
            raise Unsupported(f"{name} of float64 (XLA's code is float32 here)")
        if name in (*_CMP, *_MVEC1, *_MVEC2, *_ARITH, *_INTRINSIC1, "neg", "exp2", "max", "min",
                    "square", "rsqrt", "logistic", "sign", "integer_pow", "is_finite",
                    "clamp") and any(a.aval.dtype == BOOL for a in e.invars):
            raise Unsupported(f"{name} of booleans")
        if name in ("reduce_max", "reduce_min", "reduce_sum") and e.invars[0].aval.dtype == BOOL:
            raise Unsupported("a reduction of booleans")


class _Builder:
    """Writes SSA instructions for one copy of the loop body (masked or not)."""

    def __init__(self, isa: Isa, suffix: str, decls: set) -> None:
        self.w, self.isa, self.suffix, self.decls = isa.lanes, isa, suffix, decls
        self.lines: list[str] = []
        self.count = 0

    def ty(self, dtype: np.dtype) -> str:
        return f"<{self.w} x {_LLVM[dtype]}>"

    def fresh(self) -> str:
        self.count += 1
        return f"%t{self.count}{self.suffix}"

    def emit(self, text: str) -> str:
        name = self.fresh()
        self.lines.append(f"  {name} = {text}")
        return name

    def splat_const(self, value: Any, dtype: np.dtype) -> str:
        c = _const(value, dtype)
        scalar = _LLVM[dtype]
        return "<" + ", ".join([f"{scalar} {c}"] * self.w) + ">"

    def splat(self, scalar: str, dtype: np.dtype) -> str:
        t = _LLVM[dtype]
        one = self.emit(f"insertelement <1 x {t}> poison, {t} {scalar}, i32 0")
        return self.emit(f"shufflevector <1 x {t}> {one}, <1 x {t}> poison, "
                         f"<{self.w} x i32> zeroinitializer")

    def intrinsic(self, name: str, dtype: np.dtype, *args: str, flag: str = "") -> str:
        """llvm.{name} on vectors of dtype; `flag` an extra i1 argument (llvm.abs's)."""
        t = self.ty(dtype)
        suffix = f"v{self.w}{_mt(dtype)}"
        extra = ", i1" if flag else ""
        self.decls.add(f"declare {t} @llvm.{name}.{suffix}({', '.join([t] * len(args))}{extra})")
        operands = ", ".join(f"{t} {a}" for a in args) + (f", i1 {flag}" if flag else "")
        return self.emit(f"call {t} @llvm.{name}.{suffix}({operands})")

    def libm(self, fn: str, dtype: np.dtype, *args: str) -> str:
        """The C library's scalar `fn` (a double function, or its float version) lane by lane,
        as XLA calls it."""
        scalar = _LLVM[dtype]
        name = fn + ("f" if dtype == F32 else "")
        self.decls.add(f"declare {scalar} @{name}({', '.join([scalar] * len(args))}) nounwind")
        t, out = self.ty(dtype), "poison"
        for lane in range(self.w):
            parts = [self.emit(f"extractelement {t} {a}, i32 {lane}") for a in args]
            value = self.emit(f"call {scalar} @{name}("
                              f"{', '.join(f'{scalar} {a}' for a in parts)})")
            out = self.emit(f"insertelement {t} {out}, {scalar} {value}, i32 {lane}")
        return out

    def mvec(self, fn: str, dtype: np.dtype, *args: str) -> str:
        """libmvec's vector `fn` on W lanes, in chunks of its native width."""
        native = {"_ZGVb": 4, "_ZGVd": 8, "_ZGVe": 16}[self.isa.prefix] // (
            1 if dtype == F32 else 2)
        name = f"{self.isa.prefix}N{native}{'v' * len(args)}_{fn}{'f' if dtype == F32 else ''}"
        ct = f"<{native} x {_LLVM[dtype]}>"
        self.decls.add(f"declare {ct} @{name}({', '.join([ct] * len(args))}) nounwind")
        t = self.ty(dtype)
        if native == self.w:
            return self.emit(f"call {ct} @{name}({', '.join(f'{ct} {a}' for a in args)})")
        parts = []
        for start in range(0, self.w, native):
            idx = ", ".join(f"i32 {start + i}" for i in range(native))
            chunk_args = [self.emit(f"shufflevector {t} {a}, {t} poison, <{native} x i32> "
                                    f"<{idx}>") for a in args]
            parts.append(self.emit(f"call {ct} @{name}("
                                   f"{', '.join(f'{ct} {a}' for a in chunk_args)})"))
        width = native
        while len(parts) > 1:  # concatenate pairwise
            half = f"<{width} x {_LLVM[dtype]}>"
            idx = ", ".join(f"i32 {i}" for i in range(2 * width))
            parts = [self.emit(f"shufflevector {half} {a}, {half} {b}, <{2 * width} x i32> "
                               f"<{idx}>") for a, b in zip(parts[::2], parts[1::2])]
            width *= 2
        return parts[0]


def _op(b: _Builder, e: Any, args: list[str]) -> str:
    """The vector value of equation e's result."""
    name = e.primitive.name
    in_dt = [np.dtype(a.aval.dtype) for a in e.invars]
    dt = np.dtype(e.outvars[0].aval.dtype)
    t = b.ty(dt)
    if name == "convert_element_type":
        return _convert(b, args[0], in_dt[0], dt)
    if name == "bitcast_convert_type":
        return args[0] if in_dt[0] == dt else b.emit(f"bitcast {b.ty(in_dt[0])} {args[0]} to {t}")
    if in_dt[-1] in INTS:  # select_n's cases are its last operands
        return _int_op(b, name, args, in_dt[-1], t)
    if name == "erf_inv":
        return _erf_inv(b, args[0])
    if dt == F32 and name in _XLA_F32:  # XLA's own float32 code, not libmvec's
        return _erf_inv(b, args[0], name, *args[1:])
    if dt == F32 and name == "exp2":  # exp(x * ln 2), as below
        scaled = b.emit(f"fmul {t} {args[0]}, {b.splat_const(np.log(2), dt)}")
        return _erf_inv(b, scaled, "exp")
    if name in _ARITH:
        return b.emit(f"{_ARITH[name]} {t} {args[0]}, {args[1]}")
    if name == "neg":
        return b.emit(f"fneg {t} {args[0]}")
    if name == "square":
        return b.emit(f"fmul {t} {args[0]}, {args[0]}")
    if name in _INTRINSIC1:
        return b.intrinsic(_INTRINSIC1[name], dt, args[0])
    if name == "max":
        return b.intrinsic("maximum", dt, *args)
    if name == "min":
        return b.intrinsic("minimum", dt, *args)
    if name == "clamp":
        lo = b.intrinsic("maximum", dt, args[1], args[0])
        return b.intrinsic("minimum", dt, lo, args[2])
    if name == "fused_multiply_add":
        return b.intrinsic("fma", dt, *args)
    if name == "rsqrt":
        root = b.intrinsic("sqrt", dt, args[0])
        return b.emit(f"fdiv {t} {b.splat_const(1, dt)}, {root}")
    if name == "logistic":
        neg = b.emit(f"fneg {t} {args[0]}")
        ex = b.mvec("exp", dt, neg)
        den = b.emit(f"fadd {t} {b.splat_const(1, dt)}, {ex}")
        return b.emit(f"fdiv {t} {b.splat_const(1, dt)}, {den}")
    if name == "sign":
        zero = b.splat_const(0, dt)
        pos = b.emit(f"fcmp ogt {t} {args[0]}, {zero}")
        neg = b.emit(f"fcmp olt {t} {args[0]}, {zero}")
        lower = b.emit(f"select <{b.w} x i1> {neg}, {t} {b.splat_const(-1, dt)}, {t} {args[0]}")
        return b.emit(f"select <{b.w} x i1> {pos}, {t} {b.splat_const(1, dt)}, {t} {lower}")
    if name == "exp2":  # XLA's exp2 (tier 0's too): exp(x * ln 2), ln 2 rounded to x's dtype
        scaled = b.emit(f"fmul {t} {args[0]}, {b.splat_const(np.log(2), dt)}")
        return b.mvec("exp", dt, scaled)
    if name in _MVEC1:
        out = b.mvec(_MVEC1[name], dt, args[0])
        if name not in _TINY_RESULT:
            return out
        # a subnormal or zero x, flushed or not by libmvec: XLA's x itself, or its signed 0
        tiny = b.emit(f"fcmp olt {t} {b.intrinsic('fabs', dt, args[0])}, "
                      f"{b.splat_const(np.finfo(dt).tiny, dt)}")
        kept = args[0] if _TINY_RESULT[name] == "x" else \
            b.intrinsic("copysign", dt, b.splat_const(0, dt), args[0])
        return b.emit(f"select <{b.w} x i1> {tiny}, {t} {kept}, {t} {out}")
    if name in _MVEC2:  # (float64 too: glibc's pow and atan2, as XLA's; libmvec's differ)
        return b.libm(_MVEC2[name], dt, *args)
    if name in _CMP:
        return b.emit(f"fcmp {_CMP[name]} {b.ty(in_dt[0])} {args[0]}, {args[1]}")
    if name == "is_finite":
        mag = b.intrinsic("fabs", in_dt[0], args[0])
        return b.emit(f"fcmp olt {b.ty(in_dt[0])} {mag}, {b.splat_const(np.inf, in_dt[0])}")
    if name in _BOOL_OPS:
        return b.emit(f"{_BOOL_OPS[name]} {t} {args[0]}, {args[1]}")
    if name == "not":
        return b.emit(f"xor {t} {args[0]}, {b.splat_const(True, BOOL)}")
    if name == "select_n":
        return b.emit(f"select {b.ty(BOOL)} {args[0]}, {t} {args[2]}, {t} {args[1]}")
    if name == "integer_pow":
        return _integer_pow(b, args[0], e.params["y"], dt)
    raise Unsupported(f"{name} has no native code")


def _int_op(b: _Builder, name: str, args: list[str], dt: np.dtype, t: str) -> str:
    """An operation on integer vectors of dtype dt (t: the result's vector type)."""
    signed = dt.kind == "i"
    if name in _INT_ARITH:
        return b.emit(f"{_INT_ARITH[name]} {t} {args[0]}, {args[1]}")
    if name in _INT_CMP:
        return b.emit(f"icmp {_INT_CMP[name][0 if signed else 1]} {b.ty(dt)} {args[0]}, {args[1]}")
    if name == "select_n":
        return b.emit(f"select {b.ty(BOOL)} {args[0]}, {t} {args[2]}, {t} {args[1]}")
    if name == "neg":
        return b.emit(f"sub {t} zeroinitializer, {args[0]}")
    if name == "not":
        return b.emit(f"xor {t} {args[0]}, {b.splat_const(np.array(-1).astype(dt), dt)}")
    if name == "abs":  # abs(MIN) is MIN, as in XLA and NumPy
        return b.intrinsic("abs", dt, args[0], flag="false") if signed else args[0]
    if name in ("max", "min"):
        return b.intrinsic(("s" if signed else "u") + name, dt, *args)
    if name in _SHIFTS:
        # XLA: an amount outside [0, bits) shifts everything out (the sign, for arithmetic)
        width = b.splat_const(8 * dt.itemsize, dt)
        inside = b.emit(f"icmp ult {t} {args[1]}, {width}")
        if name == "shift_right_arithmetic":
            most = b.splat_const(8 * dt.itemsize - 1, dt)
            amount = b.emit(f"select {b.ty(BOOL)} {inside}, {t} {args[1]}, {t} {most}")
            return b.emit(f"ashr {t} {args[0]}, {amount}")
        amount = b.emit(f"select {b.ty(BOOL)} {inside}, {t} {args[1]}, {t} zeroinitializer")
        shifted = b.emit(f"{_SHIFTS[name]} {t} {args[0]}, {amount}")
        return b.emit(f"select {b.ty(BOOL)} {inside}, {t} {shifted}, {t} zeroinitializer")
    raise Unsupported(f"{name} of integers")


def _convert(b: _Builder, x: str, src: np.dtype, dt: np.dtype) -> str:
    """convert_element_type between booleans, integers and floats (never float to integer:
    the fusion plan keeps that out of clusters)."""
    t, ts = b.ty(dt), b.ty(src)
    if src == dt:
        return x
    if dt == BOOL:
        zero = b.splat_const(0, src)
        return b.emit(f"icmp ne {ts} {x}, {zero}" if src in INTS else f"fcmp une {ts} {x}, {zero}")
    if dt in INTS:
        if src == BOOL or (src in INTS and src.kind == "u" and src.itemsize < dt.itemsize):
            return b.emit(f"zext {ts} {x} to {t}")
        if src.itemsize < dt.itemsize:
            return b.emit(f"sext {ts} {x} to {t}")
        if src.itemsize > dt.itemsize:
            return b.emit(f"trunc {ts} {x} to {t}")
        return x  # same width, other signedness: the same bits
    if src == BOOL or src.kind == "u":
        return b.emit(f"uitofp {ts} {x} to {t}")
    if src in INTS:
        return b.emit(f"sitofp {ts} {x} to {t}")
    return b.emit(f"{'fpext' if dt == F64 else 'fptrunc'} {ts} {x} to {t}")


#: float32 functions computed as XLA computes them (tier1/xla_math.py), bit for bit with
#: tier 0 and eager (primitives/xla_math.py), instead of with libmvec
#: (glibc's scalar sinf, cosf, tanf, atanf, atan2f, cbrtf where XLA calls them: libmvec's differ)
_XLA_F32 = frozenset({"exp", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "sinh",
                      "cosh", "asin", "acos", "asinh", "acosh", "atanh", "atan2", "tan", "atan",
                      "cbrt", "erf", "erfc", "rsqrt", "pow"})


def _erf_inv(b: _Builder, x: str, method: str = "erf_inv", *more: str) -> str:
    """XLA's float32 erf_inv, or another of its functions (tier1/xla_math.py's steps, over
    the kernel's lanes)."""
    from pyjax._src.backend.tier1.xla_math import _Builder as XlaBuilder
    xb = XlaBuilder(b.w, prefix=b.fresh() + "e")
    out = getattr(xb, method)(x, *more)
    b.lines += xb.lines
    b.decls.update(xb.declarations())
    return out


def _integer_pow(b: _Builder, x: str, y: int, dt: np.dtype) -> str:
    """Binary exponentiation in x's type, in tier 0's order (then 1/acc for negative y)."""
    t = b.ty(dt)
    if y == 0:
        return b.emit(f"fadd {t} {b.splat_const(1, dt)}, {b.splat_const(0, dt)}")
    n, base, acc = abs(y), x, None
    while n:
        if n & 1:
            acc = base if acc is None else b.emit(f"fmul {t} {acc}, {base}")
        n >>= 1
        if n:
            base = b.emit(f"fmul {t} {base}, {base}")
    if y < 0:
        acc = b.emit(f"fdiv {t} {b.splat_const(1, dt)}, {acc}")
    return acc


def _reduce_info(red: Any, own: bool = False) -> tuple[np.dtype, str, Any]:
    """(accumulator dtype, combining op, identity) of a reduction; a sum accumulates in double
    unless `own` (then in its operand's dtype)."""
    dt = np.dtype(red.invars[0].aval.dtype)
    name = red.primitive.name
    if name == "reduce_sum":
        return (dt if own else F64), "add", 0.0
    return dt, ("maximum" if name == "reduce_max" else "minimum"), (
        -np.inf if name == "reduce_max" else np.inf)


def pairwise_name(dt: np.dtype) -> str:
    """The symbol of `dt`'s pairwise sum, a function of its own that kernels declare."""
    return f"pyjax_pairwise_{_mt(dt)}"


def pairwise_decl(dt: np.dtype) -> str:
    """The declaration a kernel that calls `dt`'s pairwise sum carries."""
    return f"declare {_LLVM[dt]} @{pairwise_name(dt)}(ptr, i64)"


def pairwise_ir(dt: np.dtype) -> str:
    """The module of `pairwise(ptr a, i64 n)`: NumPy's pairwise sum of n values in their own
    dtype, in its exact order (eight strided partial sums per block of at most 128, blocks
    halved at multiples of 8), so a short sum has tier 0's bits.  A block's additions are one
    chain, so where a split ends in two or four blocks their chains run interleaved (a row of
    1024: two calls of four blocks each, instead of eight chains one after the other).
    Compiled once per process (engine.py) and called by every kernel that sums rows so: in
    each kernel's own module it was a third of a softmax kernel's compile time."""
    t = _LLVM[dt]
    fn = f"@{pairwise_name(dt)}"
    zero = _const(0.0, dt)
    return _module([
        f"define {t} {fn}(ptr %a, i64 %n) {{",
        "entry:",
        "  %small = icmp slt i64 %n, 8",
        "  br i1 %small, label %seq, label %mid",
        "seq:",
        "  %si = phi i64 [0, %entry], [%sinext, %sbody]",
        f"  %sres = phi {t} [{zero}, %entry], [%snew, %sbody]",
        "  %smore = icmp slt i64 %si, %n",
        "  br i1 %smore, label %sbody, label %sdone",
        "sbody:",
        f"  %sp = getelementptr {t}, ptr %a, i64 %si",
        f"  %sx = load {t}, ptr %sp",
        f"  %snew = fadd {t} %sres, %sx",
        "  %sinext = add i64 %si, 1",
        "  br label %seq",
        "sdone:",
        f"  ret {t} %sres",
        "mid:",
        "  %big = icmp sgt i64 %n, 128",
        "  br i1 %big, label %split, label %one",
        "one:",
        *_leaves_ir(dt, [("%a", "%n")], "o"),
        f"  ret {t} %o0sum",
        "split:",
        *_halves("%a", "%n", "", dt),
        "  %twoleaves = icmp sle i64 %rest, 128",
        "  br i1 %twoleaves, label %two, label %deeper",
        "two:",
        *_leaves_ir(dt, [("%a", "%n2"), ("%hi", "%rest")], "w"),
        f"  %both2 = fadd {t} %w0sum, %w1sum",
        f"  ret {t} %both2",
        "deeper:",  # (rest > 128: the upper half splits)
        *_halves("%a", "%n2", "l", dt),
        *_halves("%hi", "%rest", "h", dt),
        "  %lsplits = icmp sgt i64 %n2, 128",
        "  %lleaves = icmp sle i64 %lrest, 128",
        "  %hleaves = icmp sle i64 %hrest, 128",
        "  %lfour = and i1 %lsplits, %lleaves",
        "  %four = and i1 %lfour, %hleaves",
        "  br i1 %four, label %fourleaves, label %recurse",
        "fourleaves:",
        *_leaves_ir(dt, [("%a", "%ln2"), ("%lhi", "%lrest"), ("%hi", "%hn2"),
                         ("%hhi", "%hrest")], "f"),
        f"  %f01 = fadd {t} %f0sum, %f1sum",
        f"  %f23 = fadd {t} %f2sum, %f3sum",
        f"  %both4 = fadd {t} %f01, %f23",
        f"  ret {t} %both4",
        "recurse:",
        f"  %lo_sum = call {t} {fn}(ptr %a, i64 %n2)",
        f"  %hi_sum = call {t} {fn}(ptr %hi, i64 %rest)",
        f"  %both = fadd {t} %lo_sum, %hi_sum",
        f"  ret {t} %both",
        "}"])


def shared_functions() -> dict[str, Callable[[], str]]:
    """{symbol: its module text's maker} of the functions kernels call but do not define
    (engine.py compiles each module once per process, when a kernel first declares one)."""
    from pyjax._src.backend.tier1 import xla_math
    return {"pyjax_chunks": runtime_ir, "pyjax_launch": runtime_ir, "pyjax_run": runtime_ir,
            **{pairwise_name(dt): functools.partial(pairwise_ir, dt) for dt in (F32, F64, *INTS)},
            **xla_math.shared_functions()}


def _halves(a: str, n: str, p: str, dt: np.dtype) -> list[str]:
    """NumPy's split of n values at a: %{p}n2 (half of n, down to a multiple of 8) values at
    a, %{p}rest at %{p}hi."""
    return [f"  %{p}half = lshr i64 {n}, 1",
            f"  %{p}n2 = and i64 %{p}half, -8",
            f"  %{p}rest = sub i64 {n}, %{p}n2",
            f"  %{p}hi = getelementptr {_LLVM[dt]}, ptr {a}, i64 %{p}n2"]


def _leaves_ir(dt: np.dtype, leaves: list[tuple[str, str]], p: str) -> list[str]:
    """Straight-line blocks summing each (pointer, count) of `leaves` (8 to 128 values) in
    NumPy's block order: the first 8 values, plus each next 8 lane by lane, the lanes added
    as a tree, then the last n % 8 values one by one.  The leaves' chains advance together
    while all have full vectors left; the sums end in %{p}{i}sum.  The lines start inside
    the current block and end in a new one."""
    t, v = _LLVM[dt], f"<8 x {_LLVM[dt]}>"
    size = _SIZE[dt]
    k = len(leaves)
    lines = []
    for i, (a, n) in enumerate(leaves):
        lines += [f"  %{p}{i}q = and i64 {n}, -8",
                  f"  %{p}{i}first = load {v}, ptr {a}, align {size}"]
    most = f"%{p}0q"
    for i in range(1, k):
        lines.append(f"  %{p}m{i} = call i64 @llvm.umin.i64(i64 {most}, i64 %{p}{i}q)")
        most = f"%{p}m{i}"
    lines += [f"  br label %{p}pre", f"{p}pre:", f"  br label %{p}jl", f"{p}jl:",
              f"  %{p}j = phi i64 [8, %{p}pre], [%{p}jn, %{p}jb]"]
    lines += [f"  %{p}{i}acc = phi {v} [%{p}{i}first, %{p}pre], [%{p}{i}accn, %{p}jb]"
              for i in range(k)]
    lines += [f"  %{p}jmore = icmp slt i64 %{p}j, {most}",
              f"  br i1 %{p}jmore, label %{p}jb, label %{p}jd", f"{p}jb:"]
    for i, (a, _) in enumerate(leaves):
        lines += [f"  %{p}{i}jp = getelementptr {t}, ptr {a}, i64 %{p}j",
                  f"  %{p}{i}jx = load {v}, ptr %{p}{i}jp, align {size}",
                  f"  %{p}{i}accn = fadd {v} %{p}{i}acc, %{p}{i}jx"]
    lines += [f"  %{p}jn = add i64 %{p}j, 8", f"  br label %{p}jl", f"{p}jd:"]
    prev = f"%{p}jd"
    for i, (a, n) in enumerate(leaves):
        q = f"%{p}{i}"
        lines += [f"  br label {q}rl", f"{p}{i}rl:",  # the leaf's own last full vectors
                  f"  {q}ri = phi i64 [%{p}j, {prev}], [{q}rin, {q}rb]",
                  f"  {q}racc = phi {v} [{q}acc, {prev}], [{q}raccn, {q}rb]",
                  f"  {q}rmore = icmp slt i64 {q}ri, {q}q",
                  f"  br i1 {q}rmore, label {q}rb, label {q}rd",
                  f"{p}{i}rb:",
                  f"  {q}rp = getelementptr {t}, ptr {a}, i64 {q}ri",
                  f"  {q}rx = load {v}, ptr {q}rp, align {size}",
                  f"  {q}raccn = fadd {v} {q}racc, {q}rx",
                  f"  {q}rin = add i64 {q}ri, 8",
                  f"  br label {q}rl",
                  f"{p}{i}rd:"]
        lines += [f"  {q}r{j} = extractelement {v} {q}racc, i32 {j}" for j in range(8)]
        lines += [f"  {q}s01 = fadd {t} {q}r0, {q}r1", f"  {q}s23 = fadd {t} {q}r2, {q}r3",
                  f"  {q}s45 = fadd {t} {q}r4, {q}r5", f"  {q}s67 = fadd {t} {q}r6, {q}r7",
                  f"  {q}s03 = fadd {t} {q}s01, {q}s23", f"  {q}s47 = fadd {t} {q}s45, {q}s67",
                  f"  {q}s07 = fadd {t} {q}s03, {q}s47",
                  f"  br label {q}tl",
                  f"{p}{i}tl:",  # the last n % 8 values one by one
                  f"  {q}ti = phi i64 [{q}q, {q}rd], [{q}tin, {q}tb]",
                  f"  {q}sum = phi {t} [{q}s07, {q}rd], [{q}tnew, {q}tb]",
                  f"  {q}tmore = icmp slt i64 {q}ti, {n}",
                  f"  br i1 {q}tmore, label {q}tb, label {q}td",
                  f"{p}{i}tb:",
                  f"  {q}tp = getelementptr {t}, ptr {a}, i64 {q}ti",
                  f"  {q}tx = load {t}, ptr {q}tp",
                  f"  {q}tnew = fadd {t} {q}sum, {q}tx",
                  f"  {q}tin = add i64 {q}ti, 1",
                  f"  br label {q}tl",
                  f"{p}{i}td:"]
        prev = f"{q}td"
    return lines


#: columns per block of a reduction over leading axes: the block's totals stay in cache while
#: every row's stretch of those columns streams past
COLUMN_BLOCK = 2048
#: rows of a leading-axis reduction run innermost in blocks of this many, a column step's
#: totals in registers meanwhile: the totals cross memory once per block of rows
ROW_BLOCK = 8


def unrolled(isa: Isa) -> Isa:
    """`isa` with two of its vectors a step where they are narrower than 16 lanes: each
    value's two halves are independent chains the processor overlaps (on AVX2, the lanes of
    one vector leave it waiting on latencies: per element, sin(10 e^x) cos(x^2 + 1) took
    11.4 ns on one core instead of 9.8, log1p(e^x) 6.3 instead of 4.6, selu 1.95 instead of
    1.83).  Totals take steps of their own: along a row four vectors added in turn, over
    leading axes as _leading_lanes says (_body_ir)."""
    return dataclasses.replace(isa, lanes=2 * isa.lanes) if isa.lanes < 16 else isa


#: most operations a leading-axis reduction's terms may cost for a step of four vectors
LIGHT_TERMS = 2
#: fewest elements a leading-axis reduction must have for a step of four vectors
WIDE_STEP_ELEMENTS = 1 << 16


def _leading_lanes(cluster: Any, lanes: int) -> int:
    """Columns a step of a leading-axis reduction takes: four vectors where its terms cost
    little (a plain sum: the chain of additions down each column is the step's latency, 3-4
    cycles a row, and four chains overlap; psum's sum of 4 x 16384 floats 13.2 -> 6.9 µs)
    and it is large enough to repay their compile (its masked last step makes a light
    kernel's ~16 ms ~22); one where its terms cost more (four compiled ~50% longer for ~15%
    speed)."""
    work = [e for e in cluster.eqns if e is not cluster.reduction
            and e.primitive.name not in ("broadcast_in_dim", "convert_element_type")]
    wide = (len(work) <= LIGHT_TERMS and math.prod(cluster.shape) >= WIDE_STEP_ELEMENTS
            and lanes < 16)
    return 4 * lanes if wide else lanes


def kernel_ir(cluster: Any, isa: Isa) -> tuple[str, Layout]:
    """The LLVM module text of `cluster`'s kernel and how to call it."""
    decls: set = set()
    body = _body_ir(cluster, isa, decls, "body")
    entry = _parallel_ir(isa, body.split, body.partial, decls) if isa.parallel else _SERIAL
    return _module(sorted(decls) + [""] + body.lines + [""] + entry), body.layout


#: elements of its widest member's rows a row group runs through all its members before the
#: next rows (their stretch of every array the members touch stays in the first cache levels)
GROUP_BLOCK = 4096


#: most bytes of a row group's values held on each thread's stack (per block of rows)
GROUP_STACK = 1 << 18


def group_ir(members: list, rows: int, isa: Isa, internal: list
             ) -> tuple[str, list[Layout], set]:
    """The module of a row group's kernel (fusion.RowGroup: clusters over the same `rows`
    leading axes), each member's layout, and which of the `internal` values (read by members
    only) live on the stack.  Its body runs every member's body in turn on a block of rows,
    then the next block; `kernel(R, C, args)` shares the rows out among threads as a cluster's
    kernel does (C: the widest member's columns, for the grain).  `args` holds each member's
    pointers in turn, in its layout's order; those of values on the stack are ignored: each
    thread keeps a block of rows of them, so they never leave the cache (softmax's exp(x -
    max) between the row sum and the division)."""
    decls: set = {"declare i64 @llvm.umin.i64(i64, i64)"}
    outside = {v for m in members for v in m.outputs} - set(internal)  # (read back: cached)
    bodies = [_body_ir(m, isa, decls, f"body{i}", rows, outside) for i, m in enumerate(members)]
    widths = [math.prod(m.shape[rows:]) for m in members]
    block = max(1, GROUP_BLOCK // max(widths))
    stack: dict[Any, int] = {}  # value -> bytes of one row
    room = GROUP_STACK
    for v in internal:
        row = math.prod(v.aval.shape[rows:]) * _SIZE[np.dtype(v.aval.dtype)]
        if block * row + 64 <= room:
            stack[v] = row
            room -= block * row + 64
    slots: list[Any] = []  # the value of each pointer in `args`
    for member, body in zip(members, bodies):
        slots += [member.inputs[i] for i, _ in body.layout.inputs] + body.layout.outputs
    fn = [_BODY % "body", "entry:", f"  %local = alloca ptr, i64 {len(slots)}"]
    for j in range(len(slots)):  # this thread's pointers: the values on its stack rebased
        fn += [f"  %ga{j} = getelementptr ptr, ptr %args, i64 {j}",
               f"  %gp{j} = load ptr, ptr %ga{j}",
               f"  %la{j} = getelementptr ptr, ptr %local, i64 {j}",
               f"  store ptr %gp{j}, ptr %la{j}"]
    names = {v: f"%st{k}" for k, v in enumerate(stack)}
    fn += [f"  {names[v]} = alloca i8, i64 {block * row}, align 64" for v, row in stack.items()]
    offset = 0
    for i, body in enumerate(bodies):
        fn.append(f"  %a{i} = getelementptr ptr, ptr %local, i64 {offset}")
        offset += len(body.layout.inputs) + len(body.layout.outputs)
    fn += ["  %any = icmp slt i64 %rlo, %rhi",
           "  br i1 %any, label %block, label %exit",
           "block:",
           "  %lo = phi i64 [%rlo, %entry], [%hi, %block]",
           f"  %end = add i64 %lo, {block}",
           "  %hi = call i64 @llvm.umin.i64(i64 %end, i64 %rhi)"]
    for v, row in stack.items():  # row r of v at base + r * row: the block's rows on the stack
        n = names[v]
        fn += [f"  {n}back = mul i64 %lo, -{row}",
               f"  {n}base = getelementptr i8, ptr {n}, i64 {n}back"]
        fn += [line for j, slot in enumerate(slots) if slot is v for line in (
            f"  {n}at{j} = getelementptr ptr, ptr %local, i64 {j}",
            f"  store ptr {n}base, ptr {n}at{j}")]
    fn += [f"  call void @body{i}(i64 {c}, ptr %a{i}, i64 %lo, i64 %hi, i64 0, i64 {c}, ptr null)"
           for i, c in enumerate(widths)]
    fn += ["  %more = icmp slt i64 %hi, %rhi",
           "  br i1 %more, label %block, label %exit",
           "exit:", "  ret void", "}"]
    entry = _parallel_ir(isa, "rows", None, decls) if isa.parallel else _SERIAL
    functions = [line for body in bodies for line in (*body.lines, "")]
    text = _module(sorted(decls) + [""] + functions + fn + [""] + entry)
    return text, [body.layout for body in bodies], set(stack)


@dataclasses.dataclass
class _Body:
    """A cluster's loop nest over a range of rows and columns, as an LLVM function."""

    lines: list[str]
    layout: Layout
    pairwise: np.dtype | None  # the dtype whose pairwise sum it calls
    split: str                 # what its kernel may cut among threads (_parallel_ir)
    partial: tuple | None      # a one-row total's accumulator (_parallel_ir)


def _body_ir(cluster: Any, isa: Isa, decls: set, name: str, rows: int | None = None,
             stream: Any = None) -> _Body:
    """`cluster`'s body function @name (signature _BODY's), adding what it declares to
    `decls`; `rows`: the split of a row group's member; `stream`: the outputs that may be
    written nontemporally (all when None)."""
    _check_types(cluster)
    k, leading = _split(cluster, rows)
    shape = cluster.shape
    red = cluster.reduction
    # a sum along rows shorter than LONG: each row's terms go to a scratch row, then are summed
    # in NumPy's pairwise order (tier 0 sums them so, in their own dtype); longer rows
    # accumulate per lane in double (tier 0 sums those in float64 too, rounding once)
    pairwise = (red is not None and not leading and red.primitive.name == "reduce_sum"
                and math.prod(shape[k:]) < LONG)
    # a total along a row (max, min, or a long sum in double) keeps one accumulator of the
    # host's lanes (aw), and steps of four vectors add their parts to it one after the other:
    # each lane takes its terms in the order of one vector a step, while a step's parts are
    # independent chains the processor overlaps (Σtanh(xw+b)² of 10M on one core, ns per
    # element: 1.70 with one vector a step, 1.40 with two, 1.23 with four, 1.68 with eight)
    aw = isa.lanes
    isa = unrolled(isa)  # (a pairwise sum's order is the scratch row's, not the lanes')
    if red is not None and not leading and not pairwise and aw < 16:
        isa = dataclasses.replace(isa, lanes=4 * aw)
    if leading:  # one total per column: a step's lanes are chains of their own
        isa = dataclasses.replace(isa, lanes=_leading_lanes(cluster, aw))
        aw = isa.lanes
    w = isa.lanes
    # each value a step loads: a cluster input (FULL/ROW/COL/SCALAR by how it broadcasts) or a
    # transpose member's result (TRANS: its operand, an input, read across)
    kinds: dict[Any, str] = {}
    source: dict[Any, Any] = {}
    for a, s in _uses(cluster):
        kind = _kind(s, shape, k)
        if kinds.setdefault(a, kind) != kind:
            raise Unsupported("an input used with two different broadcasts")
        source[a] = a
    for e in cluster.eqns:
        if e.primitive.name == "transpose":
            kinds[e.outvars[0]] = "TRANS"
            source[e.outvars[0]] = e.invars[0]
    pointer_inputs = sorted({(cluster.inputs.index(source[v]), kind)
                             for v, kind in kinds.items()})
    outputs = list(cluster.outputs)
    streamed = [(red is None or v is not red.outvars[0]) and (stream is None or v in stream)
                and _streams(v, shape, k, w) for v in outputs]
    layout = Layout(k, pointer_inputs, outputs, streamed)
    slot = {v: pointer_inputs.index((cluster.inputs.index(source[v]), kind))
            for v, kind in kinds.items()}
    n_ptr = len(pointer_inputs) + len(outputs)

    head = ["entry:"]
    for j in range(n_ptr):
        head.append(f"  %pp{j} = getelementptr ptr, ptr %args, i64 {j}")
        head.append(f"  %p{j} = load ptr, ptr %pp{j}")
    if pairwise:
        elt = _LLVM[np.dtype(red.invars[0].aval.dtype)]
        decls.add(pairwise_decl(np.dtype(red.outvars[0].aval.dtype)))
        head.append(f"  %room = add i64 %C, {w}")
        head.append(f"  %scratch = alloca {elt}, i64 %room, align 64")
    if red is not None and not pairwise:
        # over leading axes NumPy adds row after row into each column's total, in the
        # operand's dtype below LONG rows and in double from there: the same order here
        own = leading and math.prod(shape[:k]) < LONG
        acc_dt, combine, identity = _reduce_info(red, own)
        acc_t = f"<{aw} x {_LLVM[acc_dt]}>"
        acc_init = "<" + ", ".join([f"{_LLVM[acc_dt]} {_const(identity, acc_dt)}"] * aw) + ">"
        term_t = f"<{w} x {_LLVM[acc_dt]}>"  # a step's terms
    if leading:  # the columns' totals, one block of columns at a time
        head.append(f"  %scratch = alloca {_LLVM[acc_dt]}, i64 {COLUMN_BLOCK}, align 64")
        enter = ["  %anycol = icmp slt i64 %clo, %chi",
                 "  br i1 %anycol, label %cblock, label %exit"]
    else:  # no rows: a zero before the split
        enter = ["  %anyrow = icmp slt i64 %rlo, %rhi", "  br i1 %anyrow, label %row, label %exit"]

    def scalar_load(a: Any, index: str, prefix: str, lines: list) -> str:
        dt = np.dtype(a.aval.dtype)
        j = slot[a]
        lines.append(f"  %{prefix}a{j} = getelementptr {_STORE[dt]}, ptr %p{j}, i64 {index}")
        lines.append(f"  %{prefix}s{j} = load {_STORE[dt]}, ptr %{prefix}a{j}")
        value = f"%{prefix}s{j}"
        if dt == BOOL:
            lines.append(f"  %{prefix}b{j} = icmp ne i8 %{prefix}s{j}, 0")
            value = f"%{prefix}b{j}"
        t = _LLVM[dt]
        lines.append(f"  %{prefix}v{j} = insertelement <1 x {t}> poison, {t} {value}, i32 0")
        lines.append(f"  %{prefix}x{j} = shufflevector <1 x {t}> %{prefix}v{j}, <1 x {t}> "
                     f"poison, <{w} x i32> zeroinitializer")
        return f"%{prefix}x{j}"

    # per row: the row offset and ROW operands (scalars load once, before every loop); over
    # leading axes the rows of a block run innermost, each column step's totals in registers
    if leading:
        row = ["row:", "  %r = phi i64 [%r0, %colstart], [%rnext, %rowlatch]"]
    else:
        row = ["row:", "  %r = phi i64 [%rlo, %entry], [%rnext, %rowend]"]
    row.append("  %off = mul i64 %r, %C")
    if "TRANS" in kinds.values():
        row += _transposed_row(shape)
    hoisted: dict[Any, str] = {}
    for a, kind in kinds.items():
        if kind == "SCALAR":
            hoisted[a] = scalar_load(a, "0", "sc", head)
        elif kind == "ROW":
            hoisted[a] = scalar_load(a, "%r", "rw", row)
    row.append("  br i1 %fullstep, label %vload, label %tload" if leading else "  br label %vec")
    limit = "%cend" if leading else "%chi"  # the end of the columns a row's loop covers

    vector_inputs = [a for a, kind in kinds.items() if kind in ("FULL", "COL", "TRANS")]

    def step_loads(masked: bool, suffix: str) -> tuple[list[str], list[str], str]:
        """A step's vector operands, loaded whole, or for a row's partial last step under
        the mask of the columns left (lanes past the end read zeros): lines, values, mask."""
        b = _Builder(isa, suffix, decls)
        mask = "<" + ", ".join(["i1 true"] * w) + ">"
        if masked:
            b.lines.append(f"  %rem{suffix} = sub i64 {limit}, %c")
            mask = _mask(b, f"%rem{suffix}")
        values = []
        for a in vector_inputs:
            dt = np.dtype(a.aval.dtype)
            st = _STORE[dt]
            vt = f"<{w} x {st}>"
            if kinds[a] == "TRANS":
                values.append(_gather(b, dt, f"%p{slot[a]}", shape, mask))
                continue
            index = "%c" if kinds[a] == "COL" else b.emit("add i64 %off, %c")
            addr = b.emit(f"getelementptr {st}, ptr %p{slot[a]}, i64 {index}")
            if masked:
                values.append(b.emit(f"call {vt} @llvm.masked.load.v{w}{_mt(dt)}.p0(ptr {addr}, "
                                     f"i32 {_SIZE[dt]}, <{w} x i1> {mask}, {vt} zeroinitializer)"))
                decls.add(f"declare {vt} @llvm.masked.load.v{w}{_mt(dt)}.p0(ptr, i32, "
                          f"<{w} x i1>, {vt})")
            else:
                values.append(b.emit(f"load {vt}, ptr {addr}, align {_SIZE[dt]}"))
        return b.lines, values, mask

    def accumulate(b: _Builder, acc_in: str, x: str) -> str:
        """acc_in combined with a step's terms x, their accumulator-wide parts in turn."""
        for start in range(0, w, aw):
            part = x
            if aw < w:
                index = ", ".join(f"i32 {start + i}" for i in range(aw))
                part = b.emit(f"shufflevector {term_t} {x}, {term_t} poison, <{aw} x i32> "
                              f"<{index}>")
            if combine == "add":
                acc_in = b.emit(f"fadd {acc_t} {acc_in}, {part}")
            else:
                name = f"llvm.{combine}.v{aw}{_mt(acc_dt)}"
                b.decls.add(f"declare {acc_t} @{name}({acc_t}, {acc_t})")
                acc_in = b.emit(f"call {acc_t} @{name}({acc_t} {acc_in}, {acc_t} {part})")
        return acc_in

    def step() -> tuple[list[str], str | None, list[tuple]]:
        """The step's computation, once for whole and partial steps (its operands and mask
        are phis of the two kinds of loads): lines, the step's terms of a one-row reduction
        (accumulated after the step: a partial step's lanes past the end are left out), and
        the outputs to store as (value, dtype, pointer, index)."""
        b = _Builder(isa, "v", decls)
        vals: dict[Any, str] = {}
        for j, a in enumerate(vector_inputs):
            vt = f"<{w} x {_STORE[np.dtype(a.aval.dtype)]}>"
            b.lines.append(f"  %in{j} = phi {vt} [{whole[j]}, %vload], [{part[j]}, %tload]")
        b.lines.append(f"  %mask = phi <{w} x i1> [{whole_mask}, %vload], [{part_mask}, %tload]")
        b.lines.append("  %last = phi i1 [false, %vload], [true, %tload]")
        for j, a in enumerate(vector_inputs):  # (after all the phis) booleans from bytes
            vals[a] = (f"%in{j}" if np.dtype(a.aval.dtype) != BOOL else
                       b.emit(f"icmp ne <{w} x i8> %in{j}, zeroinitializer"))

        def atom(a: Any) -> str:
            if type(a) is Literal:
                return b.splat_const(a.val, np.dtype(a.aval.dtype))
            return vals[a] if a in vals else hoisted[a]

        term = None
        stores = []
        for e in cluster.eqns:
            out = e.outvars[0]
            if e is red:
                x = atom(e.invars[0])
                src = np.dtype(e.invars[0].aval.dtype)
                if pairwise:  # the row's terms, summed after the row (the scratch row has
                    # room for a whole last step: what lies past the row is never read)
                    vt = f"<{w} x {_LLVM[src]}>"
                    addr = b.emit(f"getelementptr {_LLVM[src]}, ptr %scratch, i64 %c")
                    b.lines.append(f"  store {vt} {x}, ptr {addr}, align {_SIZE[src]}")
                    continue
                if acc_dt != src:
                    x = b.emit(f"fpext {b.ty(src)} {x} to {term_t}")
                if leading:  # this row's term joins the columns' totals (lanes past the
                    # block's end hold nothing that is ever stored)
                    term = accumulate(b, "%acc", x)
                else:
                    term = x
                continue
            if e.primitive.name == "broadcast_in_dim":
                vals[out] = atom(e.invars[0])
                continue
            if e.primitive.name == "transpose":  # loaded with the step's operands
                continue
            vals[out] = _op(b, e, [atom(a) for a in e.invars])
        for j, v in enumerate(outputs):
            if red is not None and v is red.outvars[0]:
                continue
            stores.append((atom(v), np.dtype(v.aval.dtype), f"%p{len(pointer_inputs) + j}",
                           b.emit("add i64 %off, %c"), streamed[j]))
        return b.lines, term, stores

    # A row's columns go W at a step; the last, partial step loads under a mask.  The step's
    # computation is written once for both (LLVM compiles half as much as with a copy for
    # the partial step); the loads before it and the stores after it (masked in the last
    # step only: AMD's masked stores are slow) are written twice.
    head += enter
    whole_lines, whole, whole_mask = step_loads(False, "w")
    part_lines, part, part_mask = step_loads(True, "m")
    step_lines, term, stores = step()
    full, last = _Builder(isa, "s", decls), _Builder(isa, "t", decls)
    for value, dt, base, index, nontemporal in stores:
        _store(full, decls, value, dt, base, index, None, nontemporal)
        _store(last, decls, value, dt, base, index, "%mask")
    loads = ["vload:", *whole_lines, "  br label %vstep",
             "tload:", *part_lines, "  br label %vstep"]
    if leading:  # step's stores, then the next row of the block (_column_blocks)
        out = len(pointer_inputs) + outputs.index(red.outvars[0])
        before, after = _column_blocks(isa, decls, acc_dt, acc_t, acc_init, term,
                                       np.dtype(red.outvars[0].aval.dtype), f"%p{out}")
        row.insert(2, f"  %acc = phi {acc_t} [%acc0, %colstart], [{term}, %rowlatch]")
        fn = [_BODY % name, *head, *before, *row, *loads,
              "vstep:", *step_lines, "  br i1 %last, label %vlast, label %vnext",
              "vnext:", *full.lines, "  br label %rowlatch",
              "vlast:", *last.lines, "  br label %rowlatch", *after]
    else:
        if red is not None and not pairwise:  # lanes past the row's end add the identity
            acc_next = accumulate(full, "%acc", term)
            identities = "<" + ", ".join([f"{_LLVM[acc_dt]} {_const(identity, acc_dt)}"] * w)
            identities += ">"
            acc_last = accumulate(last, "%acc", last.emit(
                f"select <{w} x i1> %mask, {term_t} {term}, {term_t} {identities}"))
        vec = ["vec:", "  %c = phi i64 [%clo, %row], [%cnext, %vnext]"]
        if red is not None and not pairwise:
            vec.append(f"  %acc = phi {acc_t} [{acc_init}, %row], [{acc_next}, %vnext]")
        vec += ["  %rem = sub i64 %chi, %c",
                f"  %fullstep = icmp sge i64 %rem, {w}",
                "  br i1 %fullstep, label %vload, label %tail",
                "tail:", "  %left = icmp sgt i64 %rem, 0",
                "  br i1 %left, label %tload, label %rowdone", *loads]
        vbody = ["vstep:", *step_lines, "  br i1 %last, label %vlast, label %vnext",
                 "vnext:", *full.lines, f"  %cnext = add i64 %c, {w}", "  br label %vec",
                 "vlast:", *last.lines, "  br label %rowdone"]
        done = ["rowdone:"]
        if red is not None and not pairwise:
            done.append(f"  %accf = phi {acc_t} [%acc, %tail], [{acc_last}, %vlast]")
            out_dt = np.dtype(red.outvars[0].aval.dtype)
            scalar_acc = _LLVM[acc_dt]
            if combine == "add":
                decls.add(f"declare {scalar_acc} @llvm.vector.reduce.fadd.v{aw}{_mt(acc_dt)}("
                          f"{scalar_acc}, {acc_t})")
                done.append(f"  %tot = call {scalar_acc} @llvm.vector.reduce.fadd.v{aw}"
                            f"{_mt(acc_dt)}({scalar_acc} {_const(0.0, acc_dt)}, {acc_t} %accf)")
            else:
                op = "fmaximum" if combine == "maximum" else "fminimum"
                decls.add(f"declare {scalar_acc} @llvm.vector.reduce.{op}.v{aw}{_mt(acc_dt)}("
                          f"{acc_t})")
                done.append(f"  %tot = call {scalar_acc} @llvm.vector.reduce.{op}.v{aw}"
                            f"{_mt(acc_dt)}({acc_t} %accf)")
            total = "%tot"
            if out_dt != acc_dt:
                done.append(f"  %totc = fptrunc {scalar_acc} %tot to {_LLVM[out_dt]}")
                total = "%totc"
            j = len(pointer_inputs) + outputs.index(red.outvars[0])
            # a thread summing a share of one row's columns leaves its total in %part
            done += ["  %topart = icmp ne ptr %part, null",
                     "  br i1 %topart, label %partial, label %whole",
                     "partial:", f"  store {scalar_acc} %tot, ptr %part", "  br label %rowend",
                     "whole:"]
            done.append(f"  %ra = getelementptr {_LLVM[out_dt]}, ptr %p{j}, i64 %r")
            done.append(f"  store {_LLVM[out_dt]} {total}, ptr %ra")
        if pairwise:
            dt = np.dtype(red.outvars[0].aval.dtype)
            j = len(pointer_inputs) + outputs.index(red.outvars[0])
            done += [f"  %pw = call {_LLVM[dt]} @{pairwise_name(dt)}(ptr %scratch, i64 %C)",
                     # NumPy adds the row's sum to the identity (so a sum of -0.0 is +0.0)
                     f"  %tot = fadd {_LLVM[dt]} {_const(0.0, dt)}, %pw",
                     f"  %ra = getelementptr {_LLVM[dt]}, ptr %p{j}, i64 %r",
                     f"  store {_LLVM[dt]} %tot, ptr %ra"]
        done.append("  br label %rowend")
        rowend = ["rowend:", "  %rnext = add i64 %r, 1", "  %rmore = icmp slt i64 %rnext, %rhi",
                  "  br i1 %rmore, label %row, label %exit"]
        fn = [_BODY % name, *head, *row, *vec, *vbody, *done, *rowend]
    fn.append("exit:")
    if any(streamed):  # nontemporal stores are weakly ordered: done before anyone reads them
        decls.add("declare void @llvm.x86.sse.sfence()")
        fn.append("  call void @llvm.x86.sse.sfence()")
    fn += ["  ret void", "}"]
    if red is None:
        split = "any"
    elif leading:
        split = "columns"
    elif pairwise:
        split = "rows"
    else:
        split = "one row"
    partial = None
    if split == "one row":
        j = len(pointer_inputs) + outputs.index(red.outvars[0])
        partial = (acc_dt, combine, identity, np.dtype(red.outvars[0].aval.dtype), j)
    summed = np.dtype(red.invars[0].aval.dtype) if pairwise else None
    return _Body(fn, layout, summed, split, partial)


#: the loop nest over rows [rlo, rhi) and columns [clo, chi) of a C-column shape; the total
#: of a share of one row's columns goes to `part` (else the row's total to the output)
_BODY = ("define internal void @%s(i64 %%C, ptr noalias %%args, i64 %%rlo, i64 %%rhi, "
         "i64 %%clo, i64 %%chi, ptr %%part) noinline {")
_SERIAL = ["define void @kernel(i64 %R, i64 %C, ptr noalias %args) {",
           "entry:",
           "  call void @body(i64 %C, ptr %args, i64 0, i64 %R, i64 0, i64 %C, ptr null)",
           "  ret void",
           "}"]
#: most chunks one call is cut into (a one-row sum keeps a partial total per chunk)
MAX_CHUNKS = 4096
#: fewest columns in a chunk of columns
CHUNK_COLUMNS = 256
#: what every thread of a call reads: R, C, args, partial totals, 0 (chunks of rows) or 1
#: (of columns), the caller's MXCSR (flush-to-zero is per thread: fp_mode), the chunk size,
#: the number of chunks, the next chunk to take, the kernel's body, and the bytes of one
#: partial total
_CLOSURE = "{ i64, i64, ptr, ptr, i64, i32, i64, i64, i64, ptr, i64 }"
#: MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6)
_FTZ_DAZ = 0x8040


def _field(k: int, name: str) -> str:
    return f"  %{name} = getelementptr {_CLOSURE}, ptr %cl, i32 0, i32 {k}"


#: the closure's field types, by index
_CLOSURE_TYPES = _CLOSURE.strip("{} ").split(", ")


def _closure_access(op: str, fields: dict[int, str]) -> list[str]:
    """Lines that load closure fields into %names ("load") or store values into them."""
    lines = []
    for k, x in fields.items():
        t = _CLOSURE_TYPES[k]
        lines.append(_field(k, f"f{k}"))
        lines.append(f"  %{x} = load {t}, ptr %f{k}" if op == "load"
                     else f"  store {t} {x}, ptr %f{k}")
    return lines


def runtime_ir() -> str:
    """The module every parallel kernel calls into, compiled once per process (engine.py):
    `pyjax_chunks(cl)` runs the closure's chunks one at a time, taken from its shared
    counter, through the kernel's body; `pyjax_launch(cl, t)` runs it on t threads
    (libgomp's GOMP_parallel), each worker taking the caller's MXCSR; `pyjax_run` plans and
    runs a kernel's call (_run_ir)."""
    chunks = [
        "define void @pyjax_chunks(ptr %cl) {",
        "entry:",
        *_closure_access("load", {0: "R", 1: "C", 2: "args", 3: "parts", 4: "mode", 6: "size",
                                   7: "chunks", 9: "body", 10: "partsize"}),
        _field(8, "cli"),
        "  %bycols = icmp eq i64 %mode, 1",
        "  %total = select i1 %bycols, i64 %C, i64 %R",
        "  %hasparts = icmp ne ptr %parts, null",
        "  br label %take",
        "take:",
        "  %i = atomicrmw add ptr %cli, i64 1 monotonic",
        "  %left = icmp ult i64 %i, %chunks",
        "  br i1 %left, label %range, label %out",
        "range:",
        "  %lo = mul i64 %i, %size",
        "  %end = add i64 %lo, %size",
        "  %hi = call i64 @llvm.umin.i64(i64 %end, i64 %total)",
        "  br i1 %bycols, label %cols, label %rows",
        "rows:",
        "  call void %body(i64 %C, ptr %args, i64 %lo, i64 %hi, i64 0, i64 %C, ptr null)",
        "  br label %take",
        "cols:",  # a share of one row's columns leaves its total in the chunk's slot
        "  %poff = mul i64 %i, %partsize",
        "  %pat = getelementptr i8, ptr %parts, i64 %poff",
        "  %share = select i1 %hasparts, ptr %pat, ptr null",
        "  call void %body(i64 %C, ptr %args, i64 0, i64 %R, i64 %lo, i64 %hi, ptr %share)",
        "  br label %take",
        "out:",
        "  ret void", "}"]
    worker = [
        "define internal void @worker(ptr %cl) {",
        "entry:",
        "  %saved = alloca i32",
        "  call void @llvm.x86.sse.stmxcsr(ptr %saved)",
        _field(5, "clx"),
        "  call void @llvm.x86.sse.ldmxcsr(ptr %clx)",
        "  call void @pyjax_chunks(ptr %cl)",
        "  call void @llvm.x86.sse.ldmxcsr(ptr %saved)",
        "  ret void", "}"]
    launch = [
        "define void @pyjax_launch(ptr %cl, i64 %t) {",
        "entry:",
        _field(5, "clx"),
        "  call void @llvm.x86.sse.stmxcsr(ptr %clx)",
        # threads libgomp starts inherit this thread's MXCSR: they start with IEEE subnormals
        # (so its pool serves other code unchanged), and each worker sets the caller's
        "  %mx = load i32, ptr %clx",
        f"  %ieee = and i32 %mx, {~_FTZ_DAZ}",
        "  %ieeep = alloca i32",
        "  store i32 %ieee, ptr %ieeep",
        "  call void @llvm.x86.sse.ldmxcsr(ptr %ieeep)",
        "  %t32 = trunc i64 %t to i32",
        "  call void @GOMP_parallel(ptr @worker, ptr %cl, i32 %t32, i32 0)",
        "  call void @llvm.x86.sse.ldmxcsr(ptr %clx)",
        "  ret void", "}"]
    decls = ["@pyjax_kernel_threads = external global i64",
             "@pyjax_kernel_grain = external global i64",
             "@pyjax_kernel_alone = external global i64",
             "declare void @GOMP_parallel(ptr, ptr, i32, i32)",
             "declare void @llvm.x86.sse.stmxcsr(ptr)", "declare void @llvm.x86.sse.ldmxcsr(ptr)",
             "declare i64 @llvm.umin.i64(i64, i64)", "declare i64 @llvm.umax.i64(i64, i64)"]
    return "\n".join(decls + [""] + chunks + [""] + worker + [""] + launch + [""]
                     + _run_ir()) + "\n"


#: how a kernel's shape may be cut (see _parallel_ir), by the code pyjax_run takes
_SPLITS = ("any", "rows", "columns", "one row")


def _chunking(mode: list[str], w: str) -> list[str]:
    """Lines that plan a call's chunks from %R, %C and the mode lines' %mode (1: columns are
    cut, 0: rows): %bycols, %size and %chunks of it, %t threads (one for a kernel of at most
    `pyjax_kernel_alone` elements), %cut (more than one chunk); w: the lanes a chunk of
    columns is a multiple of."""
    return ["  %grain = load i64, ptr @pyjax_kernel_grain",
            "  %most = load i64, ptr @pyjax_kernel_threads",
            "  %alone = load i64, ptr @pyjax_kernel_alone",
            *mode,
            "  %bycols = icmp eq i64 %mode, 1",
            "  %total = select i1 %bycols, i64 %C, i64 %R",   # what chunks cut
            "  %other = select i1 %bycols, i64 %R, i64 %C",   # elements per item cut
            "  %any = icmp sgt i64 %other, 0",
            "  %other1 = select i1 %any, i64 %other, i64 1",
            *_ceil_div("per", "%grain", "%other1"),           # items per chunk, for grain
            f"  %align = select i1 %bycols, i64 {w}, i64 1",
            *_ceil_div("few", "%total", str(MAX_CHUNKS)),
            # a chunk of columns spans whole cache lines of many rows: at least CHUNK_COLUMNS
            f"  %wide = select i1 %bycols, i64 {CHUNK_COLUMNS}, i64 1",
            "  %atleast = call i64 @llvm.umax.i64(i64 %per, i64 %wide)",
            "  %size0 = call i64 @llvm.umax.i64(i64 %atleast, i64 %few)",
            "  %size1 = add i64 %size0, %align",
            "  %size2 = sub i64 %size1, 1",
            "  %alignneg = sub i64 0, %align",
            "  %size = and i64 %size2, %alignneg",              # a multiple of the lanes
            *_ceil_div("chunks", "%total", "%size"),
            "  %tmost = call i64 @llvm.umin.i64(i64 %most, i64 %chunks)",
            "  %elements = mul i64 %R, %C",
            "  %lone = icmp ule i64 %elements, %alone",
            "  %t = select i1 %lone, i64 1, i64 %tmost",
            "  %cut = icmp sgt i64 %chunks, 1"]


def _closure(body: str, part_size: int) -> list[str]:
    """Lines that fill closure %cl for the planned chunks of `body`; %clp: its parts' field."""
    return [f"  %cl = alloca {_CLOSURE}",
            *_closure_access("store", {0: "%R", 1: "%C", 2: "%args", 4: "%mode", 6: "%size",
                                       7: "%chunks", 8: "0", 9: body, 10: str(part_size)}),
            _field(3, "clp"),
            "  %many = icmp sgt i64 %t, 1"]


def _run_ir() -> list[str]:
    """`pyjax_run(R, C, args, body, split, w)`, the runtime's entry of a kernel without
    partial totals: `body` at once for small shapes, else cut into chunks as `split` (an
    index of _SPLITS) allows, shared by up to `pyjax_kernel_threads` threads.  In each
    kernel's module it cost ~5 ms of compile time."""
    mode = ["  %fewrows = icmp slt i64 %R, %most",
            "  %isany = icmp eq i64 %split, 0",
            "  %anycols = and i1 %isany, %fewrows",
            "  %iscols = icmp eq i64 %split, 2",
            "  %onerow = icmp eq i64 %R, 1",
            "  %isone = icmp eq i64 %split, 3",
            "  %onecols = and i1 %isone, %onerow",
            "  %somecols = or i1 %anycols, %iscols",
            "  %bycolsm = or i1 %somecols, %onecols",
            "  %mode = zext i1 %bycolsm to i64"]
    return ["define void @pyjax_run(i64 %R, i64 %C, ptr %args, ptr %body, i64 %split, i64 %w) {",
            "entry:",
            *_chunking(mode, "%w"),
            "  br i1 %cut, label %closure, label %whole",
            "whole:",
            "  call void %body(i64 %C, ptr %args, i64 0, i64 %R, i64 0, i64 %C, ptr null)",
            "  ret void",
            "closure:",
            *_closure("%body", 0),
            "  store ptr null, ptr %clp",  # chunks only share the work out: on one thread it
            "  br i1 %many, label %parallel, label %whole",  # is done whole
            "parallel:",
            "  call void @pyjax_launch(ptr %cl, i64 %t)",
            "  ret void", "}"]


def _parallel_ir(isa: Isa, split: str, partial: tuple | None, decls: set) -> list[str]:
    """`kernel(R, C, args)`: the body at once for small shapes; else the shape cut into chunks
    of at least `pyjax_kernel_grain` elements, which up to `pyjax_kernel_threads` threads
    (one while the kernel has at most `pyjax_kernel_alone` elements; the globals belong to the
    process: engine.py) take one at a time through the runtime module (`runtime_ir`), so a
    thread the OS delays holds nobody up.  `split` says what may be cut: "any" (rows, or
    columns when rows are fewer than threads), "rows" (each row summed in its own order),
    "columns" (totals over leading axes, added row after row) or "one row" (rows, or a single
    row's columns: a partial total per chunk, combined in chunk order, so the result does not
    depend on the number of threads).  Without partial totals the runtime's pyjax_run does it
    all."""
    w = isa.lanes
    if partial is None:
        decls.add("declare void @pyjax_run(i64, i64, ptr, ptr, i64, i64)")
        return ["define void @kernel(i64 %R, i64 %C, ptr noalias %args) {",
                "entry:",
                f"  call void @pyjax_run(i64 %R, i64 %C, ptr %args, ptr @body, "
                f"i64 {_SPLITS.index(split)}, i64 {w})",
                "  ret void", "}"]
    decls.update({"@pyjax_kernel_threads = external global i64",
                  "@pyjax_kernel_grain = external global i64",
                  "@pyjax_kernel_alone = external global i64",
                  "declare void @pyjax_chunks(ptr)", "declare void @pyjax_launch(ptr, i64)",
                  "declare i64 @llvm.umax.i64(i64, i64)", "declare i64 @llvm.umin.i64(i64, i64)"})
    mode = {"any": ["  %fewrows = icmp slt i64 %R, %most", "  %mode = zext i1 %fewrows to i64"],
            "rows": ["  %mode = add i64 0, 0"],
            "columns": ["  %mode = add i64 1, 0"],
            "one row": ["  %onerow = icmp eq i64 %R, 1", "  %mode = zext i1 %onerow to i64"]}
    kernel = ["define void @kernel(i64 %R, i64 %C, ptr noalias %args) {",
              "entry:",
              *_chunking(mode[split], str(w)),
              "  br i1 %cut, label %closure, label %whole",
              "whole:",
              "  call void @body(i64 %C, ptr %args, i64 0, i64 %R, i64 0, i64 %C, ptr null)",
              "  ret void",
              "closure:",
              *_closure("@body", _SIZE[partial[0]])]
    acc_dt, combine, identity, out_dt, j = partial
    acc, out = _LLVM[acc_dt], _LLVM[out_dt]
    init = _const(identity, acc_dt)
    if combine == "add":
        step = f"  %snext = fadd {acc} %s, %x"
    else:
        name = f"llvm.{combine}.{_mt(acc_dt)}"
        decls.add(f"declare {acc} @{name}({acc}, {acc})")
        step = f"  %snext = call {acc} @{name}({acc} %s, {acc} %x)"
    kernel += [f"  %parts = alloca {acc}, i64 %chunks, align 64",
               "  store ptr %parts, ptr %clp",
               "  br i1 %many, label %parallel, label %serial",
               "serial:",  # the same chunks, so the same bits, on one thread
               "  call void @pyjax_chunks(ptr %cl)",
               "  br label %joined",
               "parallel:",
               "  call void @pyjax_launch(ptr %cl, i64 %t)",
               "  br label %joined",
               "joined:",
               "  br i1 %bycols, label %combine, label %done",
               "combine:",  # the chunks' totals in chunk order
               "  %k = phi i64 [0, %joined], [%knext, %combine]",
               f"  %s = phi {acc} [{init}, %joined], [%snext, %combine]",
               f"  %xa = getelementptr {acc}, ptr %parts, i64 %k",
               f"  %x = load {acc}, ptr %xa",
               step,
               "  %knext = add i64 %k, 1",
               "  %kmore = icmp slt i64 %knext, %chunks",
               "  br i1 %kmore, label %combine, label %store",
               "store:",
               *([] if acc_dt == out_dt else [f"  %sout = fptrunc {acc} %snext to {out}"]),
               f"  %outp = getelementptr ptr, ptr %args, i64 {j}",
               "  %outb = load ptr, ptr %outp",
               f"  store {out} {'%snext' if acc_dt == out_dt else '%sout'}, ptr %outb",
               "  br label %done",
               "done:",
               "  ret void", "}"]
    return kernel


def _ceil_div(name: str, a: str, b: str) -> list[str]:
    """%{name} = ceil(a / b) for a >= 0, b > 0."""
    return [f"  %{name}a = add i64 {a}, {b}", f"  %{name}b = sub i64 %{name}a, 1",
            f"  %{name} = udiv i64 %{name}b, {b}"]


def _transposed_row(shape: tuple) -> list[str]:
    """Row lines of a kernel with transposed operands: %tbase, where row r's first element
    lies in an operand of shape (..., C, R) whose last two axes the cluster swaps (row r is
    (b, i) with b = r // R: b*R*C + i)."""
    rows, cols = shape[-2], shape[-1]
    return [f"  %tb = udiv i64 %r, {rows}",
            f"  %ti = urem i64 %r, {rows}",
            f"  %tbo = mul i64 %tb, {rows * cols}",
            "  %tbase = add i64 %tbo, %ti"]


def _gather(b: _Builder, dt: np.dtype, base: str, shape: tuple, mask: str) -> str:
    """A step's lanes of a transposed operand: columns c.. of the row, R apart in memory
    (masked lanes past the row's end are not read).  32-bit offsets where they fit (one
    vgatherdps); AVX2 gathers cost about what W loads do, but the rows a block of steps
    touches stay in cache, where a transposing copy beforehand would not."""
    w, rows, st = b.w, shape[-2], _STORE[dt]
    it = "i32" if math.prod(shape) < 2 ** 31 else "i64"
    start = b.emit("mul i64 %c, " + str(rows))
    first = b.emit(f"add i64 %tbase, {start}")
    if it == "i32":
        first = b.emit(f"trunc i64 {first} to i32")
    ins = b.emit(f"insertelement <{w} x {it}> poison, {it} {first}, i32 0")
    spl = b.emit(f"shufflevector <{w} x {it}> {ins}, <{w} x {it}> poison, "
                 f"<{w} x i32> zeroinitializer")
    strides = "<" + ", ".join(f"{it} {lane * rows}" for lane in range(w)) + ">"
    index = b.emit(f"add <{w} x {it}> {spl}, {strides}")
    addrs = b.emit(f"getelementptr {st}, ptr {base}, <{w} x {it}> {index}")
    vt = f"<{w} x {st}>"
    name = f"@llvm.masked.gather.v{w}{_mt(dt)}.v{w}p0"
    b.decls.add(f"declare {vt} {name}(<{w} x ptr>, i32, <{w} x i1>, {vt})")
    return b.emit(f"call {vt} {name}(<{w} x ptr> {addrs}, i32 {_SIZE[dt]}, <{w} x i1> {mask}, "
                  f"{vt} zeroinitializer)")


def _mask(b: _Builder, left: str) -> str:
    """The lanes below `left` (an i64 of the columns still to do)."""
    w = b.w
    ins = b.emit(f"insertelement <{w} x i64> poison, i64 {left}, i32 0")
    spl = b.emit(f"shufflevector <{w} x i64> {ins}, <{w} x i64> poison, "
                 f"<{w} x i32> zeroinitializer")
    steps = "<" + ", ".join(f"i64 {i}" for i in range(w)) + ">"
    return b.emit(f"icmp ult <{w} x i64> {steps}, {spl}")


def _streams(v: Any, shape: tuple, k: int, w: int) -> bool:
    """Whether output v is large enough to be stored nontemporally, its whole steps aligned
    (rows a multiple of W long) in a buffer starting at STREAM_ALIGN."""
    dt = np.dtype(v.aval.dtype)
    return (dt != BOOL and math.prod(shape[k:]) % w == 0
            and math.prod(shape) * dt.itemsize >= STREAM_BYTES)


def _module(lines: list[str]) -> str:
    """Module text of `lines`, with the metadata nontemporal stores name."""
    text = "\n".join(lines) + "\n"
    return text + "!0 = !{i32 1}\n" if "!nontemporal !0" in text else text


def _store(b: _Builder, decls: set, value: str, dt: np.dtype, base: str, index: str,
           mask: str | None, nontemporal: bool = False) -> None:
    """Store W lanes of `value` (a vector of dt's LLVM type) at base[index], masked or not;
    `nontemporal`: past the cache, at an address aligned to the vector or STREAM_ALIGN."""
    w, st = b.w, _STORE[dt]
    vt = f"<{w} x {st}>"
    if dt == BOOL:
        value = b.emit(f"zext <{w} x i1> {value} to {vt}")
    addr = b.emit(f"getelementptr {st}, ptr {base}, i64 {index}")
    if mask is not None:
        decls.add(f"declare void @llvm.masked.store.v{w}{_mt(dt)}.p0({vt}, ptr, i32, "
                  f"<{w} x i1>)")
        b.lines.append(f"  call void @llvm.masked.store.v{w}{_mt(dt)}.p0({vt} {value}, "
                       f"ptr {addr}, i32 {_SIZE[dt]}, <{w} x i1> {mask})")
    elif nontemporal:
        align = min(STREAM_ALIGN, w * _SIZE[dt])
        b.lines.append(f"  store {vt} {value}, ptr {addr}, align {align}, !nontemporal !0")
    else:
        b.lines.append(f"  store {vt} {value}, ptr {addr}, align {_SIZE[dt]}")


def _column_blocks(isa: Isa, decls: set, acc_dt: np.dtype, acc_t: str, acc_init: str,
                   total: str, out_dt: np.dtype, out: str) -> tuple[list[str], list[str]]:
    """The loops around a leading-axis reduction's row loop: blocks of COLUMN_BLOCK columns,
    blocks of ROW_BLOCK rows in each, steps of W columns in each, and the block's rows
    innermost (the row loop adds `total`): a step's totals stay in registers while its rows
    pass, wait in %scratch between blocks of rows, and are converted to the output dtype and
    stored after the last; each column takes its rows in order, as NumPy adds them.  Only
    the stores cost (a 256-bit store takes two cycles of AMD's Zen 1), so a column's totals
    go to memory once per block of rows.  Returns (the lines before the row loop, after it)."""
    w, cb, acc = isa.lanes, COLUMN_BLOCK, _LLVM[acc_dt]
    size = _SIZE[acc_dt]
    decls.add("declare i64 @llvm.umin.i64(i64, i64)")
    before = ["cblock:",
              "  %c0 = phi i64 [%clo, %entry], [%c0next, %bdone]",
              f"  %c0next = add i64 %c0, {cb}",
              "  %cend = call i64 @llvm.umin.i64(i64 %c0next, i64 %chi)",
              "  br label %rblock",
              "rblock:",  # (no rows at all: one block of none, the totals the identity)
              "  %r0 = phi i64 [%rlo, %cblock], [%r1, %rbdone]",
              f"  %r0end = add i64 %r0, {ROW_BLOCK}",
              "  %r1 = call i64 @llvm.umin.i64(i64 %r0end, i64 %rhi)",
              "  %firstrows = icmp eq i64 %r0, %rlo",
              "  %lastrows = icmp eq i64 %r1, %rhi",
              "  %anyrows = icmp slt i64 %r0, %r1",
              "  br label %vec",
              "vec:",
              "  %c = phi i64 [%c0, %rblock], [%cnext, %cstep]",
              "  %rem = sub i64 %cend, %c",
              "  %at = sub i64 %c, %c0",
              f"  %sa = getelementptr {acc}, ptr %scratch, i64 %at",
              "  br i1 %firstrows, label %colstart, label %colload",
              "colload:",
              f"  %accl = load {acc_t}, ptr %sa, align {size}",
              "  br label %colstart",
              "colstart:",
              f"  %acc0 = phi {acc_t} [{acc_init}, %vec], [%accl, %colload]",
              f"  %fullstep = icmp sge i64 %rem, {w}",
              "  br i1 %anyrows, label %row, label %colend"]
    b = _Builder(isa, "o", decls)
    value = "%tot"
    if out_dt != acc_dt:
        value = b.emit(f"fptrunc {acc_t} %tot to {b.ty(out_dt)}")
    whole = _Builder(isa, "f", decls)
    _store(whole, decls, value, out_dt, out, "%c", None)
    part = _Builder(isa, "g", decls)
    _store(part, decls, value, out_dt, out, "%c", _mask(part, "%rem"))
    after = ["rowlatch:",
             "  %rnext = add i64 %r, 1",
             "  %rmore = icmp slt i64 %rnext, %r1",
             "  br i1 %rmore, label %row, label %colend",
             "colend:",
             f"  %tot = phi {acc_t} [%acc0, %colstart], [{total}, %rowlatch]",
             "  br i1 %lastrows, label %emit, label %keep",
             "keep:",
             f"  store {acc_t} %tot, ptr %sa, align {size}",
             "  br label %cstep",
             "emit:", *b.lines,
             "  br i1 %fullstep, label %emitwhole, label %emitpart",
             "emitwhole:", *whole.lines, "  br label %cstep",
             "emitpart:", *part.lines, "  br label %cstep",
             "cstep:",
             f"  %cnext = add i64 %c, {w}",
             "  %cmore = icmp slt i64 %cnext, %cend",
             "  br i1 %cmore, label %vec, label %rbdone",
             "rbdone:",
             "  br i1 %lastrows, label %bdone, label %rblock",
             "bdone:",
             "  %bmore = icmp slt i64 %c0next, %chi",
             "  br i1 %bmore, label %cblock, label %exit"]
    return before, after


def _mt(dtype: np.dtype) -> str:
    """The type's name in intrinsics' suffixes."""
    return {F32: "f32", F64: "f64", BOOL: "i8"}.get(dtype) or _LLVM[dtype]
