"""LU factorisations of a batch of small real matrices as one native kernel (the `lu`
primitive's batched impl, primitives/linalg.py `_lu_batched`, step for step).

Per matrix, getf2 without blocking: the pivot is the first largest |x| of the column (a NaN
wins, as np.argmax has it), rows swap, the column is scaled by the pivot's reciprocal (1 for a
zero pivot) and the trailing block takes a multiply and a subtract per element (no fused
multiply-add), so the bits are the NumPy version's.  The matrix lives in SSA values, fully
unrolled for its (m, n) (at most 16 x 16), and a loop runs over the batch.
"""
from __future__ import annotations

import ctypes

import numpy as np

from pyjax._src.backend.machine_code import data_pointer
from pyjax._src.backend.tier1.library import KernelLibrary

_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


class _Builder:
    def __init__(self, t: str) -> None:
        self.t, self.lines, self.count = t, [], 0

    def emit(self, text: str) -> str:
        self.count += 1
        self.lines.append(f"  %v{self.count} = {text}")
        return f"%v{self.count}"

    def select(self, cond: str, a: str, b: str, t: str | None = None) -> str:
        return self.emit(f"select i1 {cond}, {t or self.t} {a}, {t or self.t} {b}")


def kernel_ir(key: tuple) -> str:
    """LLVM IR of `kernel(rows, cols, ptrs)`: rows = the batch; ptrs = a (batch, m, n, read),
    lu (batch, m, n), pivots (batch, k, int32), perm (batch, m, int32)."""
    m, n, dtype = key
    t = _TYPES[np.dtype(dtype)]
    k = min(m, n)
    b = _Builder(t)
    x = [[None] * n for _ in range(m)]
    for i in range(m):
        for j in range(n):
            at = b.emit(f"getelementptr {t}, ptr %a, i64 {i * n + j}")
            x[i][j] = b.emit(f"load {t}, ptr {at}")
    perm = [str(i) for i in range(m)]
    pivots = []
    for j in range(k):
        # the first largest |x[i][j]|, i >= j (a NaN, once met, stays)
        best, p = b.emit(f"call {t} @llvm.fabs.{_suffix(t)}({t} {x[j][j]})"), str(j)
        for i in range(j + 1, m):
            cur = b.emit(f"call {t} @llvm.fabs.{_suffix(t)}({t} {x[i][j]})")
            bigger = b.emit(f"fcmp ogt {t} {cur}, {best}")
            first_nan = b.emit(f"and i1 {b.emit(f'fcmp uno {t} {cur}, {cur}')}, "
                               f"{b.emit(f'fcmp ord {t} {best}, {best}')}")
            take = b.emit(f"or i1 {bigger}, {first_nan}")
            best = b.select(take, cur, best)
            p = b.select(take, str(i), p, "i32")
        pivots.append(p)
        # swap rows j and p (and their permutation entries)
        for i in range(j + 1, m):
            here = b.emit(f"icmp eq i32 {p}, {i}")
            for col in range(n):
                old_j = x[j][col]
                x[j][col] = b.select(here, x[i][col], x[j][col])
                x[i][col] = b.select(here, old_j, x[i][col])
            old = perm[j]
            perm[j] = b.select(here, perm[i], perm[j], "i32")
            perm[i] = b.select(here, old, perm[i], "i32")
        d = x[j][j]
        reciprocal = b.emit(f"fdiv {t} 1.0, {d}")
        zero = b.emit(f"fcmp oeq {t} {d}, 0.0")
        scale = b.select(zero, "1.0", reciprocal)
        for i in range(j + 1, m):
            x[i][j] = b.emit(f"fmul {t} {x[i][j]}, {scale}")
        for i in range(j + 1, m):
            for col in range(j + 1, n):
                product = b.emit(f"fmul {t} {x[i][j]}, {x[j][col]}")
                x[i][col] = b.emit(f"fsub {t} {x[i][col]}, {product}")
    for i in range(m):
        for j in range(n):
            at = b.emit(f"getelementptr {t}, ptr %lu, i64 {i * n + j}")
            b.lines.append(f"  store {t} {x[i][j]}, ptr {at}")
    for j, p in enumerate(pivots):
        at = b.emit(f"getelementptr i32, ptr %piv, i64 {j}")
        b.lines.append(f"  store i32 {p}, ptr {at}")
    for i, q in enumerate(perm):
        at = b.emit(f"getelementptr i32, ptr %prm, i64 {i}")
        b.lines.append(f"  store i32 {q}, ptr {at}")
    head = ["entry:"]
    for j, name in enumerate(("pa", "plu", "ppiv", "pprm")):
        head += [f"  %{name}p = getelementptr ptr, ptr %args, i64 {j}",
                 f"  %{name} = load ptr, ptr %{name}p"]
    head.append("  br label %loop")
    loop = ["loop:", "  %r = phi i64 [ 0, %entry ], [ %r1, %body ]",
            "  %done = icmp uge i64 %r, %R", "  br i1 %done, label %exit, label %body",
            "body:",
            f"  %a = getelementptr {t}, ptr %pa, i64 %off", f"  %lu = getelementptr {t}, ptr "
            "%plu, i64 %off", f"  %piv = getelementptr i32, ptr %ppiv, i64 %offk",
            f"  %prm = getelementptr i32, ptr %pprm, i64 %offm"]
    offsets = [f"  %off = mul i64 %r, {m * n}", f"  %offk = mul i64 %r, {k}",
               f"  %offm = mul i64 %r, {m}"]
    return "\n".join([
        f"declare {t} @llvm.fabs.{_suffix(t)}({t})", "",
        "define void @kernel(i64 %R, i64 %C, ptr noalias %args) {", *head, *loop[:5],
        *offsets, *loop[5:], *b.lines, "  %r1 = add i64 %r, 1", "  br label %loop",
        "exit:", "  ret void", "}"])


def _suffix(t: str) -> str:
    return "f32" if t == "float" else "f64"


#: the kernels, by (m, n, dtype)
_library = KernelLibrary(kernel_ir)


def lu(a: np.ndarray) -> list[np.ndarray] | None:
    """[lu, pivots, perm] of a batch (..., m, n) of float32/float64 matrices, or None while
    the kernel for this shape is not ready (or tier 1 does not run here)."""
    *batch, m, n = a.shape
    fn = _library.get((m, n, a.dtype.name))
    if fn is None:
        return None
    a = np.ascontiguousarray(a)
    count = a.size // (m * n)
    out = np.empty(a.shape, a.dtype)
    pivots = np.empty((*batch, min(m, n)), np.int32)
    perm = np.empty((*batch, m), np.int32)
    fn(count, 1, (ctypes.c_void_p * 4)(*map(data_pointer, (a, out, pivots, perm))))
    return [out, pivots, perm]
