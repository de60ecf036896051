"""XLA's float32 log, log1p and erf_inv as native kernels (primitives/xla_math.py's NumPy code,
step for step, one LLVM loop per element instead of ~150 NumPy passes).

The same operations in the same order, with `llvm.fma` wherever the NumPy version emulates a
fused multiply-add (as XLA's LLVM contracts them): the bits agree with the NumPy code, which
agrees with XLA (the emulation rounds twice, so in rare ties the native kernel, a true FMA, is
the one that matches XLA).  Branches become selects: every element computes both sides.
`evaluate(name, x)` answers None until the kernel is compiled (tier 1's thread), and the
caller computes with NumPy meanwhile.
"""
from __future__ import annotations

import ctypes
import struct

import numpy as np

from pyjax._src.backend.machine_code import data_pointer
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
    """Straight-line float32 SSA code, one method per operation."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def emit(self, text: str) -> str:
        self.count += 1
        name = f"%v{self.count}"
        self.lines.append(f"  {name} = {text}")
        return name

    def op(self, name: str, a: str, b: str) -> str:
        return self.emit(f"{name} float {a}, {b}")

    def fma(self, a: str, b: str, c: str) -> str:
        return self.emit(f"call float @llvm.fma.f32(float {a}, float {b}, float {c})")

    def call1(self, fn: str, a: str) -> str:
        return self.emit(f"call float @llvm.{fn}.f32(float {a})")

    def cmp(self, predicate: str, a: str, b: str) -> str:
        return self.emit(f"fcmp {predicate} float {a}, {b}")

    def select(self, cond: str, a: str, b: str) -> str:
        return self.emit(f"select i1 {cond}, float {a}, float {b}")

    def horner(self, x: str, coefficients: tuple) -> str:
        """sum c_i x^(n-i) by fused multiply-adds (highest power first)."""
        acc = _f32(coefficients[0])
        for c in coefficients[1:]:
            acc = self.fma(acc, x, _f32(c))
        return acc

    def log(self, v: str) -> str:
        """XLA's log (Cephes, as primitives/xla_math._log_f32)."""
        normal = self.select(self.cmp("ogt", v, _f32(2.0 ** -126)), v, _f32(2.0 ** -126))
        bits = self.emit(f"bitcast float {normal} to i32")
        exponent = self.emit(f"lshr i32 {bits}, 23")
        unbiased = self.emit(f"sub i32 {exponent}, 127")
        e = self.op("fadd", self.emit(f"sitofp i32 {unbiased} to float"), _f32(1))
        mantissa = self.emit(f"or i32 {self.emit(f'and i32 {bits}, 2155872255')}, 1056964608")
        x = self.emit(f"bitcast i32 {mantissa} to float")
        small = self.cmp("olt", x, _f32(0.707106781186547524))
        e = self.op("fsub", e, self.select(small, _f32(1), _f32(0)))
        x = self.op("fadd", self.op("fsub", x, _f32(1)), self.select(small, x, _f32(0)))
        x2 = self.op("fmul", x, x)
        x3 = self.op("fmul", x2, x)
        coefficients = _numpy_version()._LOG_P
        y, y1, y2 = (self.horner(x, coefficients[i:i + 3]) for i in (0, 3, 6))
        y = self.fma(self.fma(self.fma(y, x3, y1), x3, y2), x3,
                     self.op("fmul", _f32(-2.12194440e-4), e))
        out = self.op("fadd", self.fma(x2, _f32(-0.5), x), y)
        out = self.fma(e, _f32(0.693359375), out)
        # log(0) = -inf, log(inf) = inf, NaN below 0 (and for NaN)
        out = self.select(self.cmp("ogt", v, _f32(0)), out, _f32(float("nan")))
        out = self.select(self.cmp("oeq", v, _f32(0)), _f32(float("-inf")), out)
        return self.select(self.cmp("oeq", v, _f32(float("inf"))), v, out)

    def log1p(self, x: str) -> str:
        """XLA's log1p: a Cephes rational function for |x| < sqrt(2) - 1, else log(1 + x)."""
        x2 = self.op("fmul", x, x)
        constants = _numpy_version()
        num = self.horner(x, constants._LOG1P_NUM64)
        den = self.horner(x, constants._LOG1P_DEN64)
        ratio = self.op("fdiv", num, den)
        small = self.op("fadd", x, self.fma(x2, _f32(-0.5), self.op("fmul", self.op(
            "fmul", x, x2), ratio)))
        large = self.log(self.op("fadd", x, _f32(1)))
        near = self.cmp("olt", self.call1("fabs", x), _f32(0.41421356237309504880))
        return self.select(near, small, large)

    def erf_inv(self, x: str) -> str:
        """Giles' single precision erf_inv; +-inf at +-1."""
        square = self.op("fmul", x, x)
        w = self.emit(f"fneg float {self.log1p(self.emit(f'fneg float {square}'))}")
        constants = _numpy_version()
        central = self.horner(self.op("fsub", w, _f32(2.5)), constants._ERFINV_LT5)
        tail = self.horner(self.op("fsub", self.call1("sqrt", w), _f32(3)), constants._ERFINV_GE5)
        p = self.select(self.cmp("olt", w, _f32(5)), central, tail)
        out = self.op("fmul", p, x)
        edge = self.cmp("oeq", self.call1("fabs", x), _f32(1))
        return self.select(edge, self.op("fmul", x, _f32(float("inf"))), out)


def kernel_ir(name: str) -> str:
    """LLVM IR of `kernel(rows, cols, ptrs)`: ptrs = input, output (float32, rows * cols)."""
    b = _Builder()
    result = getattr(b, name)("%x")
    return "\n".join([
        "declare float @llvm.fma.f32(float, float, float)",
        "declare float @llvm.fabs.f32(float)", "declare float @llvm.sqrt.f32(float)", "",
        'define void @kernel(i64 %R, i64 %C, ptr noalias %args) #0 {', "entry:",
        "  %pin = load ptr, ptr %args", "  %pp1 = getelementptr ptr, ptr %args, i64 1",
        "  %pout = load ptr, ptr %pp1", "  %n = mul i64 %R, %C", "  br label %loop", "loop:",
        "  %i = phi i64 [ 0, %entry ], [ %i1, %body ]", "  %done = icmp uge i64 %i, %n",
        "  br i1 %done, label %exit, label %body", "body:",
        "  %xa = getelementptr float, ptr %pin, i64 %i", "  %x = load float, ptr %xa",
        *b.lines,
        "  %oa = getelementptr float, ptr %pout, i64 %i", f"  store float {result}, ptr %oa",
        "  %i1 = add i64 %i, 1", "  br label %loop", "exit:", "  ret void", "}", "",
        'attributes #0 = { nounwind "prefer-vector-width"="512" }'])


#: the kernels, by function name
_library = KernelLibrary(kernel_ir)


def evaluate(name: str, x: np.ndarray) -> np.ndarray | None:
    """XLA's float32 `name` ("log", "log1p" or "erf_inv") of x, or None while its kernel is
    not ready (or tier 1 does not run here)."""
    fn = _library.get(name)
    if fn is None:
        return None
    shape = np.shape(x)
    x = np.ascontiguousarray(x, np.float32)  # (1-d for a 0-d x)
    out = np.empty(shape, np.float32)
    fn(1, x.size, (ctypes.c_void_p * 2)(data_pointer(x), data_pointer(out)))
    return out
