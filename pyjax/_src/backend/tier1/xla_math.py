"""XLA's float32 exp, logistic, tanh, expm1, log, log1p, erf_inv, and glibc's sinf and cosf (what
XLA calls for sin and cos), as native kernels: primitives/xla_math.py's NumPy code step for step,
one LLVM loop over vectors instead of ~20 to ~150 NumPy passes.  The same `_Builder` code runs
inline in tier 1's fused kernels (codegen.py), so eager, tier 0 and tier 1 give the same bits.

The same operations in the same order, with `llvm.fma` wherever the NumPy version emulates a
fused multiply-add (as XLA's LLVM contracts them): the bits agree with the NumPy code, which
agrees with XLA (the emulation rounds twice, so in rare ties the native kernel, a true FMA, is
the one that matches XLA).  Branches become selects: every element computes both sides
(but sin and cos, whose vectors branch on their lanes' ranges: their code then holds blocks).
`evaluate(name, x)` answers None until the kernel is compiled (tier 1's thread), and the
caller computes with NumPy meanwhile.
"""
from __future__ import annotations

import ctypes
import functools
import struct
from typing import Any, Callable

import numpy as np

from pyjax._src.backend.machine_code import array_kernel, data_pointer
from pyjax._src.backend.tier1.library import KernelLibrary

def _numpy_version():
    """primitives/xla_math.py, whose constants the kernels share (imported when a kernel is
    built: that module imports this one)."""
    from pyjax._src.primitives import xla_math
    return xla_math


def _f32(value: float) -> str:
    """An LLVM float literal: the float32 value, written as the double it equals."""
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", float(np.float32(value))))[0]


class _Builder:
    """Straight-line float32 SSA code, one method per operation, on scalars or on vectors of
    `lanes` lanes (tier 1's fused kernels); value names start with `prefix`."""

    def __init__(self, lanes: int = 1, prefix: str = "%v") -> None:
        self.lines: list[str] = []
        self.count = 0
        self.lanes, self.prefix = lanes, prefix
        vector = (lambda t: f"<{lanes} x {t}>") if lanes > 1 else (lambda t: t)
        self.t, self.it, self.bt = vector("float"), vector("i32"), vector("i1")
        self.dt, self.lt = vector("double"), vector("i64")
        self.suffix = f"v{lanes}f32" if lanes > 1 else "f32"
        self.extra: dict[str, None] = {}  # further declarations, in first-use order

    def declarations(self) -> list[str]:
        """The intrinsics the code calls (and the tables it reads)."""
        t = self.t
        return [f"declare {t} @llvm.fma.{self.suffix}({t}, {t}, {t})",
                f"declare {t} @llvm.fabs.{self.suffix}({t})",
                f"declare {t} @llvm.sqrt.{self.suffix}({t})", *self.extra]

    def intrinsic(self, name: str, scalar: str, *args: str) -> str:
        """llvm.`name` on values of the scalar type `scalar` ("float" or "double") over the
        lanes."""
        t = self.t if scalar == "float" else self.dt
        suffix = (f"v{self.lanes}" if self.lanes > 1 else "") + ("f32" if scalar == "float"
                                                                else "f64")
        self.extra[f"declare {t} @llvm.{name}.{suffix}({', '.join([t] * len(args))})"] = None
        return self.emit(f"call {t} @llvm.{name}.{suffix}({', '.join(f'{t} {a}' for a in args)})")

    def splat(self, scalar: str, constant: str) -> str:
        """A constant of the scalar type over the lanes."""
        return constant if self.lanes == 1 else \
            "<" + ", ".join([f"{scalar} {constant}"] * self.lanes) + ">"

    def kd(self, value: float) -> str:
        """A float64 constant (splat over the lanes)."""
        return self.splat("double", "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0])

    def kl(self, value: int) -> str:
        """An i64 constant (splat over the lanes)."""
        return self.splat("i64", str(int(np.array(value, np.uint64).view(np.int64))))

    def k(self, value: float) -> str:
        """A float32 constant (splat over the lanes)."""
        c = _f32(value)
        return c if self.lanes == 1 else "<" + ", ".join([f"float {c}"] * self.lanes) + ">"

    def ki(self, value: int) -> str:
        """An i32 constant (splat over the lanes)."""
        c = str(int(np.array(value, np.uint32).view(np.int32)))
        return c if self.lanes == 1 else "<" + ", ".join([f"i32 {c}"] * self.lanes) + ">"

    def emit(self, text: str) -> str:
        self.count += 1
        name = f"{self.prefix}{self.count}"
        self.lines.append(f"  {name} = {text}")
        return name

    def op(self, name: str, a: str, b: str) -> str:
        return self.emit(f"{name} {self.t} {a}, {b}")

    def fma(self, a: str, b: str, c: str) -> str:
        t = self.t
        return self.emit(f"call {t} @llvm.fma.{self.suffix}({t} {a}, {t} {b}, {t} {c})")

    def call1(self, fn: str, a: str) -> str:
        return self.emit(f"call {self.t} @llvm.{fn}.{self.suffix}({self.t} {a})")

    def cmp(self, predicate: str, a: str, b: str) -> str:
        return self.emit(f"fcmp {predicate} {self.t} {a}, {b}")

    def select(self, cond: str, a: str, b: str) -> str:
        return self.emit(f"select {self.bt} {cond}, {self.t} {a}, {self.t} {b}")

    def horner(self, x: str, coefficients: tuple) -> str:
        """sum c_i x^(n-i) by fused multiply-adds (highest power first)."""
        acc = self.k(coefficients[0])
        for c in coefficients[1:]:
            acc = self.fma(acc, x, self.k(c))
        return acc

    def log(self, v: str) -> str:
        """XLA's log (Cephes, as primitives/xla_math._log_f32)."""
        normal = self.select(self.cmp("ogt", v, self.k(2.0 ** -126)), v, self.k(2.0 ** -126))
        bits = self.emit(f"bitcast {self.t} {normal} to {self.it}")
        exponent = self.emit(f"lshr {self.it} {bits}, {self.ki(23)}")
        unbiased = self.emit(f"sub {self.it} {exponent}, {self.ki(127)}")
        e = self.op("fadd", self.emit(f"sitofp {self.it} {unbiased} to {self.t}"), self.k(1))
        fraction = self.emit(f"and {self.it} {bits}, {self.ki(2155872255)}")
        mantissa = self.emit(f"or {self.it} {fraction}, {self.ki(1056964608)}")
        x = self.emit(f"bitcast {self.it} {mantissa} to {self.t}")
        small = self.cmp("olt", x, self.k(0.707106781186547524))
        e = self.op("fsub", e, self.select(small, self.k(1), self.k(0)))
        x = self.op("fadd", self.op("fsub", x, self.k(1)), self.select(small, x, self.k(0)))
        x2 = self.op("fmul", x, x)
        x3 = self.op("fmul", x2, x)
        coefficients = _numpy_version()._LOG_P
        y, y1, y2 = (self.horner(x, coefficients[i:i + 3]) for i in (0, 3, 6))
        y = self.fma(self.fma(self.fma(y, x3, y1), x3, y2), x3,
                     self.op("fmul", self.k(-2.12194440e-4), e))
        out = self.op("fadd", self.fma(x2, self.k(-0.5), x), y)
        out = self.fma(e, self.k(0.693359375), out)
        # log(0) = -inf, log(inf) = inf, NaN below 0 and for NaN
        nan = self.emit(f"bitcast {self.it} {self.ki(0xFFFFFFFF)} to {self.t}")  # all bits set
        out = self.select(self.cmp("ogt", v, self.k(0)), out, nan)
        out = self.select(self.cmp("oeq", v, self.k(0)), self.k(float("-inf")), out)
        return self.select(self.cmp("oeq", v, self.k(float("inf"))), v, out)

    def log1p(self, x: str, shared_half: bool = False) -> str:
        """XLA's log1p: a Cephes rational function for |x| < sqrt(2) - 1, else log(1 + x)
        (shared_half: the other product fused, as primitives/xla_math._log1p_small)."""
        x2 = self.op("fmul", x, x)
        constants = _numpy_version()
        num = self.horner(x, constants._LOG1P_NUM64)
        den = self.horner(x, constants._LOG1P_DEN64)
        ratio = self.op("fdiv", num, den)
        cube = self.op("fmul", x, x2)
        if shared_half:
            small = self.op("fadd", x, self.fma(cube, ratio, self.op("fmul", x2, self.k(-0.5))))
        else:
            small = self.op("fadd", x, self.fma(x2, self.k(-0.5), self.op("fmul", cube, ratio)))
        large = self.log(self.op("fadd", x, self.k(1)))
        near = self.cmp("olt", self.call1("fabs", x), self.k(0.41421356237309504880))
        return self.select(near, small, large)

    def erf_inv(self, x: str) -> str:
        """Giles' single precision erf_inv; +-inf at +-1."""
        square = self.op("fmul", x, x)
        w = self.emit(f"fneg {self.t} {self.log1p(self.emit(f'fneg {self.t} {square}'))}")
        constants = _numpy_version()
        central = self.horner(self.op("fsub", w, self.k(2.5)), constants._ERFINV_LT5)
        tail = self.horner(self.op("fsub", self.call1("sqrt", w), self.k(3)), constants._ERFINV_GE5)
        p = self.select(self.cmp("olt", w, self.k(5)), central, tail)
        out = self.op("fmul", p, x)
        edge = self.cmp("oeq", self.call1("fabs", x), self.k(1))
        return self.select(edge, self.op("fmul", x, self.k(float("inf"))), out)

    # exp, logistic, tanh, expm1 (primitives/xla_math.py's _exp_parts and the rest)

    def clamp(self, x: str, lo: float, hi: float) -> str:
        """min(max(x, lo), hi), NaN staying NaN (as np.clip)."""
        x = self.select(self.cmp("olt", x, self.k(lo)), self.k(lo), x)
        return self.select(self.cmp("ogt", x, self.k(hi)), self.k(hi), x)

    def exp_parts(self, x: str) -> tuple[str, str]:
        """exp(x) as y * 2^n: the values y and 2^n."""
        c = _numpy_version()
        x = self.clamp(x, c._EXP_LO, c._EXP_HI)
        n = self.intrinsic("floor", "float", self.fma(x, self.k(c._LOG2E), self.k(0.5)))
        # n clipped to [-127, 127]: from x >= _EXP_LO the floor is -127 at least (of -126.17)
        n = self.select(self.cmp("ogt", n, self.k(127)), self.k(127), n)
        r = self.fma(n, self.k(-c._EXP_LN2_HI), x)
        r = self.fma(n, self.k(-c._EXP_LN2_LO), r)
        y = self.fma(self.horner(r, c._EXP_P), self.op("fmul", r, r), r)
        y = self.op("fadd", y, self.k(1))
        # NaN n: 0 here (fptosi would be poison), scale 1 in NumPy's integer indefinite alike
        n = self.select(self.cmp("uno", n, n), self.k(0), n)
        k = self.emit(f"fptosi {self.t} {n} to {self.it}")
        k = self.emit(f"shl {self.it} {self.emit(f'add {self.it} {k}, {self.ki(127)}')}, "
                      f"{self.ki(23)}")
        return y, self.emit(f"bitcast {self.it} {k} to {self.t}")

    def exp(self, x: str) -> str:
        """XLA's exp."""
        y, scale = self.exp_parts(x)
        return self.op("fmul", y, scale)

    def logistic(self, x: str) -> str:
        """XLA's logistic: 1 / (1 + exp(-x)), exp's last product fused into the sum."""
        y, scale = self.exp_parts(self.emit(f"fneg {self.t} {x}"))
        return self.op("fdiv", self.k(1), self.fma(y, scale, self.k(1)))

    def tanh(self, x: str) -> str:
        """XLA's tanh: a rational function of x clamped to +-7.9988; x below 0.0004.  XLA
        also gives +-1 from 20 in magnitude, which the function already is at the clamp (with
        fused multiply-adds it rounds to exactly +-1: tests/test_xla_math_native.py checks),
        so that select is left out."""
        c = _numpy_version()
        clamped = self.clamp(x, -c._TANH_CLAMP, c._TANH_CLAMP)
        square = self.op("fmul", clamped, clamped)
        num = self.op("fmul", self.horner(square, c._TANH_NUM), clamped)
        out = self.op("fdiv", num, self.horner(square, c._TANH_DEN))
        magnitude = self.call1("fabs", x)
        return self.select(self.cmp("olt", magnitude, self.k(0.0004)), x, out)

    def expm1(self, x: str) -> str:
        """XLA's expm1: exp(x) - 1 beyond 1/2 in magnitude, else tanh(x/2) (exp(x) + 1); x
        where x/2 is 0."""
        e = self.exp(x)
        half = self.op("fmul", x, self.k(0.5))
        small = self.op("fmul", self.tanh(half), self.op("fadd", e, self.k(1)))
        out = self.select(self.cmp("ogt", self.call1("fabs", x), self.k(0.5)),
                          self.op("fsub", e, self.k(1)), small)
        return self.select(self.cmp("oeq", half, self.k(0)), x, out)

    # sinh, cosh, asin, acos, asinh, acosh, atanh: JAX's decompositions
    # (primitives/xla_math.py's _sinh_f32 and the rest)

    def sinh(self, x: str) -> str:
        """|x| < 1: (e + e / (e + 1)) / 2, e = expm1(x); else exp(x - ln 2) - exp(-ln 2 - x)."""
        c = _numpy_version()
        e = self.expm1(x)
        small = self.op("fadd", e, self.op("fdiv", e, self.op("fadd", e, self.k(1))))
        small = self.op("fmul", small, self.k(0.5))
        y1, s1 = self.exp_parts(self.op("fadd", x, self.k(c._NEG_LN2)))
        y2, s2 = self.exp_parts(self.op("fsub", self.k(c._NEG_LN2), x))
        big = self.fma(y1, s1, self.emit(f"fneg {self.t} {self.op('fmul', y2, s2)}"))
        out = self.select(self.cmp("olt", self.call1("fabs", x), self.k(1)), small, big)
        return self.select(self.cmp("uno", x, x), self.op("fadd", x, x), out)  # x's NaN

    def cosh(self, x: str) -> str:
        """exp(x - ln 2) + exp(-ln 2 - x)."""
        c = _numpy_version()
        y1, s1 = self.exp_parts(self.op("fadd", x, self.k(c._NEG_LN2)))
        y2, s2 = self.exp_parts(self.op("fsub", self.k(c._NEG_LN2), x))
        return self.fma(y1, s1, self.op("fmul", y2, s2))

    def libm(self, fn: str, *args: str) -> str:
        """The C library's float function `fn` (what XLA calls for it), lane by lane (libmvec's
        vector versions differ from it in the last bit)."""
        self.extra[f"declare float @{fn}({', '.join(['float'] * len(args))})"] = None
        if self.lanes == 1:
            return self.emit(f"call float @{fn}({', '.join(f'float {a}' for a in args)})")
        out = "poison"
        for lane in range(self.lanes):
            parts = [self.emit(f"extractelement {self.t} {a}, i32 {lane}") for a in args]
            value = self.emit(f"call float @{fn}({', '.join(f'float {a}' for a in parts)})")
            out = self.emit(f"insertelement {self.t} {out}, float {value}, i32 {lane}")
        return out

    def atan2(self, y: str, x: str) -> str:
        """XLA's atan2: glibc's atan2f."""
        return self.libm("atan2f", y, x)

    def tan(self, x: str) -> str:
        """XLA's tan: glibc's tanf."""
        return self.libm("tanf", x)

    def atan(self, x: str) -> str:
        """XLA's atan (on vectors of 8): glibc's atanf."""
        return self.libm("atanf", x)

    def atan_scalar(self, x: str) -> str:
        """XLA's atan in scalar loops (primitives/xla_math._atan_scalar_f32): r = min(|x|,
        1/|x|), r P(r^2) / Q(r^2), pi/2 minus it for |x| > 1, x's sign; x below 1e-3."""
        c = _numpy_version()
        magnitude = self.call1("fabs", x)
        big = self.cmp("ogt", magnitude, self.k(1))
        r = self.select(big, self.op("fdiv", self.k(1), magnitude), magnitude)
        square = self.op("fmul", r, r)
        out = self.op("fmul", r, self.op("fdiv", self.horner(square, c._ATAN_P),
                                         self.horner(square, c._ATAN_Q)))
        out = self.select(big, self.op("fsub", self.k(c._ATAN_HALF_PI), out), out)
        out = self.intrinsic("copysign", "float", out, x)
        return self.select(self.cmp("olt", magnitude, self.k(1e-3)), x, out)

    def cbrt(self, x: str) -> str:
        """XLA's cbrt: glibc's cbrtf."""
        return self.libm("cbrtf", x)

    def pow(self, x: str, y: str) -> str:
        """XLA's pow: glibc's powf (libmvec's differs)."""
        return self.libm("powf", x, y)

    def _one_minus_square_root(self, x: str) -> str:
        """sqrt((1 - x)(1 + x))."""
        product = self.op("fmul", self.op("fsub", self.k(1), x), self.op("fadd", x, self.k(1)))
        return self.call1("sqrt", product)

    def asin(self, x: str) -> str:
        """2 atan2(x, 1 + sqrt((1 - x)(1 + x)))."""
        a = self.atan2(x, self.op("fadd", self._one_minus_square_root(x), self.k(1)))
        return self.op("fadd", a, a)

    def acos(self, x: str) -> str:
        """atan2(sqrt((1 - x)(1 + x)), x)."""
        return self.atan2(self._one_minus_square_root(x), x)

    def asinh(self, x: str) -> str:
        """sign(x) (|x| >= 2^64: log|x| + ln 2; else log1p(|x| + x^2 / (sqrt(x^2 + 1) + 1)))."""
        c = _numpy_version()
        magnitude = self.call1("fabs", x)
        square = self.op("fmul", x, x)
        root = self.op("fadd", self.call1("sqrt", self.op("fadd", square, self.k(1))), self.k(1))
        near = self.log1p(self.op("fadd", magnitude, self.op("fdiv", square, root)))
        far = self.op("fadd", self.log(magnitude), self.k(c._LN2))
        value = self.select(self.cmp("oge", magnitude, self.k(1.8446743e19)), far, near)
        nonzero = self.emit(f"uitofp {self.bt} {self.cmp('one', x, self.k(0))} to {self.t}")
        sign = self.intrinsic("copysign", "float", nonzero, x)
        sign = self.select(self.cmp("uno", x, x), x, sign)
        return self.op("fmul", sign, value)

    def acosh(self, x: str) -> str:
        """x >= 2^127: log x + ln 2; else log1p(sqrt(x - 1) (sqrt(x + 1) + sqrt(x - 1)))."""
        c = _numpy_version()
        below = self.call1("sqrt", self.op("fadd", x, self.k(-1)))
        total = self.op("fadd", self.call1("sqrt", self.op("fadd", x, self.k(1))), below)
        near = self.log1p(self.op("fmul", below, total))
        far = self.op("fadd", self.log(x), self.k(c._LN2))
        return self.select(self.cmp("oge", x, self.k(1.70141173e38)), far, near)

    def atanh(self, x: str) -> str:
        """(log1p(x) - log1p(-x)) / 2; NaN beyond 1 in magnitude."""
        difference = self.op("fsub", self.log1p(x, True),
                             self.log1p(self.emit(f"fneg {self.t} {x}"), True))
        out = self.op("fmul", difference, self.k(0.5))
        beyond = self.cmp("ogt", self.call1("fabs", x), self.k(1))
        return self.select(beyond, self.k(float("nan")), out)

    # erf (XLA's rational function), erfc (JAX's decomposition): primitives/xla_math._erf_f32
    # and _erfc_f32

    def erf(self, x: str) -> str:
        """x P(x^2) / Q(x^2); +-1 from |x| >= 3.832."""
        c = _numpy_version()
        square = self.op("fmul", x, x)
        out = self.op("fdiv", self.op("fmul", x, self.horner(square, c._ERF_P)),
                      self.horner(square, c._ERF_Q))
        one = self.intrinsic("copysign", "float", self.k(1), x)
        return self.select(self.cmp("oge", self.call1("fabs", x), self.k(c._ERF_ONE)), one, out)

    def erfc(self, x: str) -> str:
        """|x| < 1: 1 - x P(x^2); else exp(-x^2) (1 / |x|) Q(1 / x^2), 0 past x^2 > 88.72,
        2 minus that for negative x; NaN: |x|'s."""
        c = _numpy_version()
        square = self.op("fmul", x, x)
        z = self.op("fdiv", self.k(1), square)
        magnitude = self.call1("fabs", x)
        far = self.op("fmul", self.exp(self.emit(f"fneg {self.t} {square}")),
                      self.op("fdiv", self.k(1), magnitude))
        q = self.select(self.cmp("olt", magnitude, self.k(2)), self.horner(z, c._ERFC_Q_NEAR),
                        self.horner(z, c._ERFC_Q_FAR))
        far = self.op("fmul", far, q)
        far = self.select(self.cmp("ogt", square, self.k(c._ERFC_ZERO)), self.k(0), far)
        far = self.select(self.cmp("olt", x, self.k(0)), self.op("fsub", self.k(2), far), far)
        near = self.fma(self.emit(f"fneg {self.t} {x}"), self.horner(square, c._ERFC_P),
                        self.k(1))
        out = self.select(self.cmp("olt", magnitude, self.k(1)), near, far)
        return self.select(self.cmp("uno", x, x), self.op("fadd", magnitude, magnitude), out)

    # rsqrt: the processor's estimate and a Newton step (primitives/xla_math._rsqrt_f32)

    def rsqrt_estimate(self, x: str) -> str:
        """rsqrtss of each lane: vrsqrtps on vectors of 4 or 8 lanes (the same table), the
        scalar instruction otherwise (not AVX-512's rsqrt14, a different estimate)."""
        if self.lanes in (4, 8):
            name = "llvm.x86.sse.rsqrt.ps" if self.lanes == 4 else "llvm.x86.avx.rsqrt.ps.256"
            self.extra[f"declare {self.t} @{name}({self.t})"] = None
            return self.emit(f"call {self.t} @{name}({self.t} {x})")
        self.extra["declare <4 x float> @llvm.x86.sse.rsqrt.ss(<4 x float>)"] = None
        out = "poison"
        for lane in range(self.lanes):
            value = x if self.lanes == 1 else \
                self.emit(f"extractelement {self.t} {x}, i32 {lane}")
            v4 = self.emit(f"insertelement <4 x float> poison, float {value}, i32 0")
            v4 = self.emit(f"call <4 x float> @llvm.x86.sse.rsqrt.ss(<4 x float> {v4})")
            value = self.emit(f"extractelement <4 x float> {v4}, i32 0")
            if self.lanes == 1:
                return value
            out = self.emit(f"insertelement {self.t} {out}, float {value}, i32 {lane}")
        return out

    def rsqrt(self, x: str) -> str:
        """y = rsqrtss(x); y + (-y/2)(x y y - 1) where x is a positive normal number."""
        y = self.rsqrt_estimate(x)
        residual = self.fma(self.op("fmul", x, y), y, self.k(-1))
        out = self.fma(self.op("fmul", y, self.k(-0.5)), residual, y)
        bits = self.emit(f"bitcast {self.t} {x} to {self.it}")
        offset = self.emit(f"sub {self.it} {bits}, {self.ki(0x00800000)}")
        normal = self.emit(f"icmp ult {self.it} {offset}, {self.ki(0x7F000000)}")
        return self.select(normal, out, y)

    # sin, cos: glibc's sinf/cosf (primitives/xla_math._sincos_f32), every lane through the
    # reduction of both ranges

    def dfma(self, a: str, b: str, c: str) -> str:
        return self.intrinsic("fma", "double", a, b, c)

    def sign_blend(self, mask: str, if_set: str, if_clear: str) -> str:
        """Double lanes: if_set where the sign bit of `mask`'s (i64) lane is set, else
        if_clear, by AVX's vblendvpd (lanes a multiple of 4).  A select on a compare of that
        bit costs two more instructions a vector: LLVM rewrites it to test the bit in place."""
        name = "llvm.x86.avx.blendv.pd.256"
        v4 = "<4 x double>"
        self.extra[f"declare {v4} @{name}({v4}, {v4}, {v4})"] = None
        parts = []
        for start in range(0, self.lanes, 4):
            lanes = f"<4 x i32> <{', '.join(f'i32 {start + i}' for i in range(4))}>"
            quarter = [self.emit(f"shufflevector {t} {v}, {t} poison, {lanes}")
                       for v, t in ((if_clear, self.dt), (if_set, self.dt), (mask, self.lt))]
            bits = self.emit(f"bitcast <4 x i64> {quarter[2]} to {v4}")
            parts.append(self.emit(f"call {v4} @{name}({v4} {quarter[0]}, {v4} {quarter[1]}, "
                                   f"{v4} {bits})"))
        width = 4
        while len(parts) > 1:  # concatenated pairwise
            lanes = ", ".join(f"i32 {i}" for i in range(2 * width))
            parts = [self.emit(f"shufflevector <{width} x double> {a}, <{width} x double> {b}, "
                               f"<{2 * width} x i32> <{lanes}>")
                     for a, b in zip(parts[::2], parts[1::2])]
            width *= 2
        return parts[0]

    def sin_or_cos_poly(self, x: str, pick: Callable[[str, str], str]) -> str:
        """glibc's sine polynomial of x (x + x^3 s1 + x^5 (s2 + x^2 s3)) on the lanes where
        it serves, its cosine polynomial (c0 + x^2 c1 + x^4 c2 + x^6 (c3 + x^2 c4)) on the
        others (pick(for_sin, for_cos) chooses by lane), as one polynomial of per-lane
        operands: both are fma(fma(x^2, a, b), u x^2, fma(u, v, w)) with u = x^3 or x^4 (each
        product and multiply-add the one glibc's code rounds)."""
        c = _numpy_version()
        s1, s2, s3 = c._SIN_POLY
        c0, c1, c2, c3, c4 = c._COS_POLY
        dt = self.dt
        x2 = self.emit(f"fmul {dt} {x}, {x}")
        u = self.emit(f"fmul {dt} {pick(x, x2)}, {x2}")  # x^3 = x x^2, or x^4 = x^2 x^2
        w = pick(x, self.dfma(x2, self.kd(c1), self.kd(c0)))
        low = self.dfma(u, pick(self.kd(s1), self.kd(c2)), w)
        high = self.dfma(x2, pick(self.kd(s3), self.kd(c4)), pick(self.kd(s2), self.kd(c3)))
        return self.dfma(high, self.emit(f"fmul {dt} {u}, {x2}"), low)

    def table_words(self, index: str) -> str:
        """The i32 words of glibc's 4/pi table at `index` (i32 lanes)."""
        table = _numpy_version()._INV_PIO4
        self.extra["@xla_math_inv_pio4 = private unnamed_addr constant [24 x i32] ["
                   + ", ".join(f"i32 {int(np.uint32(v).view(np.int32))}" for v in table)
                   + "]"] = None

        address = self.emit(f"getelementptr i32, ptr @xla_math_inv_pio4, {self.it} {index}")
        if self.lanes == 1:
            return self.emit(f"load i32, ptr {address}")
        w = self.lanes  # (the index is in 0..23 on every lane)
        gather = f"llvm.masked.gather.v{w}i32.v{w}p0"
        self.extra[f"declare {self.it} @{gather}(<{w} x ptr>, i32, {self.bt}, {self.it})"] = None
        return self.emit(f"call {self.it} @{gather}(<{w} x ptr> {address}, i32 4, {self.bt} "
                         f"{self.splat('i1', 'true')}, {self.it} poison)")

    def reduce_large(self, bits: str) -> tuple[str, str]:
        """glibc's reduction of |y| >= 120 in integers: (r as doubles, the quadrant n in 0..3
        as i32)."""
        it, lt = self.it, self.lt
        index = self.emit(f"and {it} {self.emit(f'lshr {it} {bits}, {self.ki(26)}')}, "
                          f"{self.ki(15)}")
        shift = self.emit(f"and {it} {self.emit(f'lshr {it} {bits}, {self.ki(23)}')}, "
                          f"{self.ki(7)}")
        m = self.emit(f"or {it} {self.emit(f'and {it} {bits}, {self.ki(0xFFFFFF)}')}, "
                      f"{self.ki(0x800000)}")
        m = self.emit(f"shl {it} {m}, {shift}")
        words = [self.table_words(self.emit(f"add {it} {index}, {self.ki(k)}")) for k in (0, 4, 8)]
        low = self.emit(f"zext {it} {self.emit(f'mul {it} {m}, {words[0]}')} to {lt}")
        m64 = self.emit(f"zext {it} {m} to {lt}")
        middle = self.emit(f"mul {lt} {m64}, {self.emit(f'zext {it} {words[1]} to {lt}')}")
        high = self.emit(f"mul {lt} {m64}, {self.emit(f'zext {it} {words[2]} to {lt}')}")
        total = self.emit(f"or {lt} {self.emit(f'lshr {lt} {high}, {self.kl(32)}')}, "
                          f"{self.emit(f'shl {lt} {low}, {self.kl(32)}')}")
        total = self.emit(f"add {lt} {total}, {middle}")
        n = self.emit(f"lshr {lt} {self.emit(f'add {lt} {total}, {self.kl(1 << 61)}')}, "
                      f"{self.kl(62)}")
        total = self.emit(f"sub {lt} {total}, {self.emit(f'shl {lt} {n}, {self.kl(62)}')}")
        # the float64 of the signed 64-bit total, rounded once: its high half (exact) * 2^32 plus
        # its low half (exact), as 32-bit conversions (without AVX-512, a vector of i64 -> f64
        # conversions is lane by lane)
        high = self.emit(f"trunc {lt} {self.emit(f'ashr {lt} {total}, {self.kl(32)}')} to {it}")
        high = self.emit(f"sitofp {it} {high} to {self.dt}")
        low = self.emit(f"trunc {lt} {total} to {it}")
        low = self.emit(f"sitofp {it} {self.emit(f'xor {it} {low}, {self.ki(0x80000000)}')} "
                        f"to {self.dt}")
        low = self.emit(f"fadd {self.dt} {low}, {self.kd(2.0 ** 31)}")
        r = self.dfma(high, self.kd(2.0 ** 32), low)
        r = self.emit(f"fmul {self.dt} {r}, {self.kd(_numpy_version()._PI_2_64)}")
        return r, self.emit(f"trunc {lt} {n} to {it}")

    #: large lanes of a vector the scalar function serves one by one, at most (more: the
    #: vector function, which reduces every lane both ways)
    LANES_ONE_BY_ONE = 4

    def sincos(self, y: str, cosine: bool) -> str:
        """sin or cos of y.  A vector whose lanes all take the fast reduction (2^-12 <= |y| <
        120) runs it inline; another calls functions of the module's own: with more than
        LANES_ONE_BY_ONE lanes from 120 on (finite), the vector one that reduces every lane
        both ways, else the vector one of the fast reduction (small, inf and NaN lanes by
        selects) and the scalar one on each large lane.  (sin(10 e^x) of normal x: a vector in
        ten held a large lane, and each such vector took the reductions both ways, 10-15% of
        the kernel's time.)"""
        if self.lanes == 1:
            return self.emit(f"call float {self.sincos_function(cosine, 1, True)}(float {y})")
        t, it, bt, w = self.t, self.it, self.bt, self.lanes
        label = f"{self.prefix[1:]}{self.count}"
        magnitude = self.emit(f"and {it} {self.emit(f'bitcast {t} {y} to {it}')}, "
                              f"{self.ki(0x7FFFFFFF)}")
        # magnitude - 2^-12 below 120 - 2^-12 (unsigned): the lanes the fast way serves
        offset = self.emit(f"sub {it} {magnitude}, {self.ki(0x39800000)}")
        other = self.emit(f"icmp uge {it} {offset}, {self.ki(0x42F00000 - 0x39800000)}")
        reduce_or = f"llvm.vector.reduce.or.v{w}i1"
        self.extra[f"declare i1 @{reduce_or}({bt})"] = None
        anyother = self.emit(f"call i1 @{reduce_or}({bt} {other})")
        self.lines += [f"  br i1 {anyother}, label %{label}.mend, label %{label}.fast",
                       f"{label}.fast:"]
        near, _ = self.sincos_finite(y, cosine, large=False)
        self.lines += [f"  br label %{label}.join", f"{label}.mend:"]
        large = self.emit(f"icmp uge {it} {magnitude}, {self.ki(0x42F00000)}")
        finite = self.emit(f"icmp ult {it} {magnitude}, {self.ki(0x7F800000)}")
        large = self.emit(f"and {bt} {large}, {finite}")
        iw = f"i{w}"
        bits = self.emit(f"bitcast {bt} {large} to {iw}")
        self.extra[f"declare {iw} @llvm.ctpop.{iw}({iw})"] = None
        self.extra[f"declare {iw} @llvm.cttz.{iw}({iw}, i1)"] = None
        count = self.emit(f"call {iw} @llvm.ctpop.{iw}({iw} {bits})")
        many = self.emit(f"icmp ugt {iw} {count}, {self.LANES_ONE_BY_ONE}")
        self.lines += [f"  br i1 {many}, label %{label}.vector, label %{label}.lanes",
                       f"{label}.vector:"]
        whole = self.emit(f"call {t} {self.sincos_function(cosine, w, True)}({t} {y})")
        p = f"%{label}."  # the lane loop's own values
        one = self.sincos_function(cosine, 1, True)
        self.lines += [f"  br label %{label}.join", f"{label}.lanes:",
                       f"  {p}near = call {t} {self.sincos_function(cosine, w, False)}({t} {y})",
                       f"  {p}none = icmp eq {iw} {bits}, 0",
                       f"  br i1 {p}none, label %{label}.join, label %{label}.lane",
                       f"{label}.lane:",
                       f"  {p}left = phi {iw} [{bits}, %{label}.lanes], [{p}rest, %{label}.lane]",
                       f"  {p}acc = phi {t} [{p}near, %{label}.lanes], [{p}put, %{label}.lane]",
                       f"  {p}at = call {iw} @llvm.cttz.{iw}({iw} {p}left, i1 true)",
                       f"  {p}index = zext {iw} {p}at to i64",
                       f"  {p}y = extractelement {t} {y}, i64 {p}index",
                       f"  {p}value = call float {one}(float {p}y)",
                       f"  {p}put = insertelement {t} {p}acc, float {p}value, i64 {p}index",
                       f"  {p}below = sub {iw} {p}left, 1",
                       f"  {p}rest = and {iw} {p}left, {p}below",
                       f"  {p}more = icmp ne {iw} {p}rest, 0",
                       f"  br i1 {p}more, label %{label}.lane, label %{label}.join",
                       f"{label}.join:"]
        return self.emit(f"phi {t} [{near}, %{label}.fast], [{whole}, %{label}.vector], "
                         f"[{p}near, %{label}.lanes], [{p}put, %{label}.lane]")

    def picker(self, use_sin: str) -> Callable[[str, str], str]:
        """pick(for_sin, for_cos) of double lanes by the i1 lanes use_sin (a select)."""
        dt = self.dt
        return lambda for_sin, for_cos: self.emit(
            f"select {self.bt} {use_sin}, {dt} {for_sin}, {dt} {for_cos}")

    def sincos_function(self, cosine: bool, lanes: int, large: bool) -> str:
        """The name of the shared function (sincos_module) of sin or cos over `lanes` lanes
        that the module declares: every lane reduced both ways, or (not `large`) the fast way
        only, for lanes below 120 and the small and special ones."""
        name = sincos_name(cosine, lanes, large)
        t = f"<{lanes} x float>" if lanes > 1 else "float"
        self.extra[f"declare {t} @{name}({t}) nounwind"] = None
        return f"@{name}"

    def exceptional(self, y: str, cosine: bool, magnitude: str, out: str) -> str:
        """`out` where 2^-12 <= |y| < inf; else glibc's y (sin) or 1 (cos) below, and its
        (y - y) / (y - y), which is y - y itself (a NaN over itself), for inf and NaN."""
        it = self.it
        tiny = self.emit(f"icmp ult {it} {magnitude}, {self.ki(0x39800000)}")
        out = self.select(tiny, self.k(1) if cosine else y, out)
        special = self.emit(f"icmp uge {it} {magnitude}, {self.ki(0x7F800000)}")
        return self.select(special, self.op("fsub", y, y), out)

    def sincos_inline(self, y: str, cosine: bool, large: bool = True) -> str:
        """sin or cos as straight-line code, |y| >= 120 reduced too if `large`."""
        out, magnitude = self.sincos_finite(y, cosine, large)
        return self.exceptional(y, cosine, magnitude, out)

    def sincos_finite(self, y: str, cosine: bool, large: bool) -> tuple[str, str]:
        """(sin or cos where 2^-12 <= |y| < inf, as straight-line code, |y| >= 120 reduced
        too if `large`; |y|'s bits)."""
        c = _numpy_version()
        it, dt = self.it, self.dt
        bits = self.emit(f"bitcast {self.t} {y} to {it}")
        magnitude = self.emit(f"and {it} {bits}, {self.ki(0x7FFFFFFF)}")
        x = self.emit(f"fpext {self.t} {y} to {dt}")
        if not large:
            # |y| < 120 on every lane: n = y 2/pi rounded to nearest by adding 1.5 2^52 in
            # the same fused step (its low bits hold n, its lowest the polynomial), r = y -
            # n pi/2 fused.  glibc rounds a truncated scaled product instead: the two differ
            # on next to no y, and there both quadrants' values round alike (every float32
            # below 120 was checked against glibc's sinf and cosf)
            shifter = self.kd(1.5 * 2.0 ** 52)
            shifted_n = self.dfma(x, self.kd(c._TWO_OVER_PI_2_24 * 2.0 ** -24), shifter)
            nf = self.emit(f"fsub {dt} {shifted_n}, {shifter}")
            r = self.dfma(nf, self.kd(-c._HALF_PI), x)
            low = self.emit(f"bitcast {dt} {shifted_n} to {self.lt}")
            n = self.emit(f"trunc {self.lt} {low} to {it}")
            odd = self.emit(f"shl {self.lt} {low}, {self.kl(63)}")  # the sign bit: n odd
            if self.lanes % 4 == 0 and _has_avx():
                def pick(for_sin: str, for_cos: str) -> str:
                    return (self.sign_blend(odd, for_sin, for_cos) if cosine else
                            self.sign_blend(odd, for_cos, for_sin))
            else:
                use_sin = self.emit(f"icmp {'slt' if cosine else 'sge'} {self.lt} {odd}, "
                                    f"{self.kl(0)}")
                pick = self.picker(use_sin)
            # the sign's quadrant below (the quadrant is n): n for sin, n + 1 for cos
            signed = self.emit(f"add {it} {n}, {self.ki(1)}") if cosine else n
        else:
            # n = round(y 2/pi) through a scaled conversion, r = y - n pi/2 fused
            scaled = self.emit(f"fmul {dt} {x}, {self.kd(c._TWO_OVER_PI_2_24)}")
            middle = self.emit(f"icmp ult {it} {magnitude}, {self.ki(0x42F00000)}")
            scaled = self.emit(f"select {self.bt} {middle}, {dt} {scaled}, {dt} {self.kd(0)}")
            n = self.emit(f"fptosi {dt} {scaled} to {it}")
            n = self.emit(f"ashr {it} {self.emit(f'add {it} {n}, {self.ki(0x800000)}')}, "
                          f"{self.ki(24)}")
            r = self.dfma(self.emit(f"sitofp {it} {n} to {dt}"), self.kd(-c._HALF_PI), x)
            large_r, large_n = self.reduce_large(bits)
            r = self.emit(f"select {self.bt} {middle}, {dt} {r}, {dt} {large_r}")
            sign = self.emit(f"lshr {it} {bits}, {self.ki(31)}")
            quadrant = self.emit(f"select {self.bt} {middle}, {it} {n}, {it} "
                                 f"{self.emit(f'add {it} {large_n}, {sign}')}")
            n = self.emit(f"select {self.bt} {middle}, {it} {n}, {it} {large_n}")
            odd = self.emit(f"and {it} {n}, {self.ki(1)}")
            use_sin = self.emit(f"icmp eq {it} {odd}, {self.ki(1 if cosine else 0)}")
            # the sign by quadrant, (quadrant + 1) & 2 where the sine polynomial serves and
            # quadrant & 2 where the cosine's does
            shifted = odd if cosine else self.emit(f"xor {it} {odd}, {self.ki(1)}")
            signed = self.emit(f"add {it} {quadrant}, {shifted}")
            pick = self.picker(use_sin)
        value = self.sin_or_cos_poly(r, pick)
        # the sign flipped in the float32 result (glibc negates r or the coefficients: the
        # double value is negated exactly, and so its rounding)
        sign = self.emit(f"shl {it} {self.emit(f'and {it} {signed}, {self.ki(2)}')}, "
                         f"{self.ki(30)}")
        out = self.emit(f"bitcast {self.t} {self.emit(f'fptrunc {dt} {value} to {self.t}')} "
                        f"to {it}")
        out = self.emit(f"bitcast {it} {self.emit(f'xor {it} {out}, {sign}')} to {self.t}")
        return out, magnitude

    def sin(self, x: str) -> str:
        """XLA's sin: glibc's sinf."""
        return self.sincos(x, False)

    def cos(self, x: str) -> str:
        """XLA's cos: glibc's cosf."""
        return self.sincos(x, True)


def sincos_name(cosine: bool, lanes: int, large: bool) -> str:
    """The symbol of the shared function of sin or cos over `lanes` lanes (see
    _Builder.sincos_function)."""
    return f"pyjax_xla_{'cos' if cosine else 'sin'}_{lanes}{'' if large else '_near'}"


def sincos_module(cosine: bool, lanes: int, large: bool) -> str:
    """The module of sin or cos over `lanes` lanes as a function of its own, which kernels
    call for the lanes their inline code leaves (engine.py compiles it once per process: the
    large reduction's vector function alone took ~30 ms of CPU to compile in every kernel)."""
    body = _Builder(lanes, "%f")
    t = body.t
    out = body.sincos_inline("%y", cosine, large)
    return "\n".join([*dict.fromkeys(body.declarations()), "",
                      f"define {t} @{sincos_name(cosine, lanes, large)}({t} %y) nounwind {{",
                      "entry:", *body.lines, f"  ret {t} {out}", "}", ""])


def shared_functions() -> dict[str, Callable[[], str]]:
    """{symbol: its module's maker} of the shared sin and cos functions, for every width a
    kernel may use (codegen.shared_functions)."""
    return {sincos_name(cosine, lanes, large): functools.partial(sincos_module, cosine,
                                                                  lanes, large)
            for cosine in (False, True) for lanes in (1, 4, 8, 16, 32)
            for large in (False, True)}


def _has_avx() -> bool:
    """The host runs AVX (tier 1's vectors of 8 or 16 lanes: AVX2 or AVX-512)."""
    from pyjax._src.backend.tier1 import engine
    return engine.isa().lanes >= 8


def kernel_ir(name: str) -> str:
    """LLVM IR of `kernel(in, out, n)`: out[i] = name(in[i]) for n float32 values, a vector of
    codegen.unrolled's lanes at a time, then one at a time (the same operations: the same
    bits)."""
    from pyjax._src.backend.tier1 import codegen, engine
    lanes = codegen.unrolled(engine.isa()).lanes
    vt = f"<{lanes} x float>"
    vector, scalar = _Builder(lanes, "%v"), _Builder(1, "%s")
    wide = getattr(vector, name)("%xv")
    one = getattr(scalar, name)("%xs")
    declarations = dict.fromkeys([*vector.declarations(), *scalar.declarations()])
    return "\n".join([
        *declarations, "",
        "define void @kernel(ptr noalias %pin, ptr noalias %pout, i64 %n) #0 {", "entry:",
        f"  %nv = and i64 %n, {-lanes}", "  br label %vloop",
        "vloop:", "  %i = phi i64 [ 0, %entry ], [ %i1, %vnext ]",
        "  %vdone = icmp uge i64 %i, %nv", "  br i1 %vdone, label %sloop, label %vbody",
        "vbody:", "  %xva = getelementptr float, ptr %pin, i64 %i",
        f"  %xv = load {vt}, ptr %xva, align 4", *vector.lines,
        "  br label %vnext", "vnext:",  # (the vector code may branch: sin, cos)
        "  %ova = getelementptr float, ptr %pout, i64 %i",
        f"  store {vt} {wide}, ptr %ova, align 4", f"  %i1 = add i64 %i, {lanes}",
        "  br label %vloop",
        "sloop:", "  %j = phi i64 [ %nv, %vloop ], [ %j1, %sbody ]",
        "  %sdone = icmp uge i64 %j, %n", "  br i1 %sdone, label %exit, label %sbody",
        "sbody:", "  %xsa = getelementptr float, ptr %pin, i64 %j", "  %xs = load float, ptr %xsa",
        *scalar.lines,
        "  %osa = getelementptr float, ptr %pout, i64 %j", f"  store float {one}, ptr %osa",
        "  %j1 = add i64 %j, 1", "  br label %sloop", "exit:", "  ret void", "}", "",
        'attributes #0 = { nounwind }'])


#: the kernels, by function name
_library = KernelLibrary(kernel_ir)
#: the compiled kernels by name: (a ctypes (in, out, n) function, a machine_code.array_kernel
#: builtin (in, out) -> out or None where that cannot be made)
_calls: dict[str, tuple] = {}
_CALL_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
_FLOAT32 = np.dtype(np.float32)
#: arrays up to this many elements call their kernel through the builtin, which holds the
#: GIL (~40 µs of sin at most); larger ones through ctypes, which releases it
_BUILTIN_MAX = 1 << 12


def _callers(name: str, compiled: Any) -> tuple:
    """The _calls entry of a compiled kernel."""
    address = ctypes.cast(compiled, ctypes.c_void_p).value
    try:
        builtin = array_kernel(name, address)
    except (OSError, ValueError, AttributeError):  # no executable memory, another platform
        builtin = None
    return _CALL_TYPE(address), builtin


def evaluate(name: str, x: np.ndarray) -> np.ndarray | None:
    """XLA's float32 `name` (a _Builder method: "exp", "log", "sin", "erf_inv", ...) of x, or
    None while its kernel is not ready (or tier 1 does not run here)."""
    calls = _calls.get(name)
    if calls is None:
        compiled = _library.get(name)
        if compiled is None:
            return None
        calls = _calls[name] = _callers(name, compiled)
    if type(x) is not np.ndarray or x.dtype is not _FLOAT32 or not x.flags.c_contiguous:
        x = np.asarray(x, np.float32)  # (a NumPy scalar: 0-d, as ascontiguousarray's is not)
        if not x.flags.c_contiguous:
            x = np.ascontiguousarray(x)
    out = np.empty(x.shape, np.float32)
    if x.size <= _BUILTIN_MAX and calls[1] is not None:
        return calls[1](x, out)
    calls[0](data_pointer(x), data_pointer(out), x.size)
    return out
