"""Factorisations of a batch of small real matrices as native kernels: the matrix lives in SSA
values, fully unrolled for its shape (at most 16 x 16), and a loop runs over the batch.

`lu`: the `lu` primitive's batched impl (primitives/linalg.py `_lu_batched`) step for step.
Per matrix, getf2 without blocking: the pivot is the first largest |x| of the column (a NaN
wins, as np.argmax has it), rows swap, the column is scaled by the pivot's reciprocal (1 for a
zero pivot) and the trailing block takes a multiply and a subtract per element (no fused
multiply-add), so the bits are the NumPy version's.

`cholesky`: reference LAPACK's potf2 (lower): the diagonal less a dot product, its square
root, the column below less a matrix-vector product (column after column, as dgemv) scaled
by the root's reciprocal; a matrix with a pivot <= 0 becomes NaNs (a NaN pivot goes on, as
in OpenBLAS's potrf), and the upper triangle is the input's (as the NumPy gufunc path leaves
it).  Rounding follows the reference order, not OpenBLAS's kernels: equal to the gufunc's
results to a few ulps, not bit for bit.
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

    def op(self, name: str, a: str, b: str) -> str:
        return self.emit(f"{name} {self.t} {a}, {b}")

    def select(self, cond: str, a: str, b: str, t: str | None = None) -> str:
        return self.emit(f"select i1 {cond}, {t or self.t} {a}, {t or self.t} {b}")


def _load(b: _Builder, m: int, n: int) -> list[list[str]]:
    x = [[""] * n for _ in range(m)]
    for i in range(m):
        for j in range(n):
            at = b.emit(f"getelementptr {b.t}, ptr %a, i64 {i * n + j}")
            x[i][j] = b.emit(f"load {b.t}, ptr {at}")
    return x


def _store(b: _Builder, x: list[list[str]], n: int) -> None:
    for i, row in enumerate(x):
        for j, value in enumerate(row):
            at = b.emit(f"getelementptr {b.t}, ptr %out, i64 {i * n + j}")
            b.lines.append(f"  store {b.t} {value}, ptr {at}")


def lu_ir(key: tuple) -> str:
    """LLVM IR of `kernel(rows, cols, ptrs)`: rows = the batch; ptrs = a (batch, m, n, read),
    lu (batch, m, n), pivots (batch, k, int32), perm (batch, m, int32)."""
    m, n, dtype = key
    t = _TYPES[np.dtype(dtype)]
    k = min(m, n)
    b = _Builder(t)
    x = _load(b, m, n)
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
    _store(b, x, n)
    for j, p in enumerate(pivots):
        at = b.emit(f"getelementptr i32, ptr %piv, i64 {j}")
        b.lines.append(f"  store i32 {p}, ptr {at}")
    for i, q in enumerate(perm):
        at = b.emit(f"getelementptr i32, ptr %prm, i64 {i}")
        b.lines.append(f"  store i32 {q}, ptr {at}")
    return _kernel(t, b.lines, {"out": m * n, "piv": k, "prm": m}, m * n)


def cholesky_ir(key: tuple) -> str:
    """LLVM IR of `kernel(rows, cols, ptrs)`: rows = the batch; ptrs = a (batch, n, n, read),
    out (batch, n, n)."""
    n, dtype = key
    t = _TYPES[np.dtype(dtype)]
    b = _Builder(t)
    x = _load(b, n, n)
    low = [row[:] for row in x]
    ok = "true"
    for j in range(n):
        dot = "0.0"
        for k in range(j):
            dot = b.op("fadd", dot, b.op("fmul", low[j][k], low[j][k]))
        pivot = b.op("fsub", x[j][j], dot) if j else x[j][j]
        # a pivot <= 0 fails the matrix; a NaN one goes on, as OpenBLAS's potrf has it
        ok = b.emit(f"and i1 {ok}, {b.emit(f'fcmp ugt {t} {pivot}, 0.0')}")
        root = b.emit(f"call {t} @llvm.sqrt.{_suffix(t)}({t} {pivot})")
        low[j][j] = root
        reciprocal = b.op("fdiv", "1.0", root)
        for i in range(j + 1, n):
            y = x[i][j]
            for k in range(j):  # dgemv: y += (-l[j][k]) * l[i][k], column after column
                y = b.op("fadd", y, b.op("fmul", b.emit(f"fneg {t} {low[j][k]}"), low[i][k]))
            low[i][j] = b.op("fmul", y, reciprocal)
    nan = "0x7FF8000000000000"
    out = [[b.select(ok, low[i][j] if j <= i else x[i][j], nan) for j in range(n)]
           for i in range(n)]
    _store(b, out, n)
    return _kernel(t, b.lines, {"out": n * n}, n * n)


def _kernel(t: str, lines: list[str], outputs: dict[str, int], in_size: int) -> str:
    """The batch loop around one matrix's code: `a` (read) and each output, advanced by
    their sizes per matrix."""
    pointers = {"a": (t, in_size), **{name: (t if name == "out" else "i32", size)
                                      for name, size in outputs.items()}}
    head = ["entry:"]
    for j, name in enumerate(pointers):
        head += [f"  %p{name}p = getelementptr ptr, ptr %args, i64 {j}",
                 f"  %p{name} = load ptr, ptr %p{name}p"]
    body = []
    for name, (ty, size) in pointers.items():
        body += [f"  %off{name} = mul i64 %r, {size}",
                 f"  %{name} = getelementptr {ty}, ptr %p{name}, i64 %off{name}"]
    return "\n".join([
        f"declare {t} @llvm.fabs.{_suffix(t)}({t})", f"declare {t} @llvm.sqrt.{_suffix(t)}({t})",
        "", "define void @kernel(i64 %R, i64 %C, ptr noalias %args) {", *head,
        "  br label %loop", "loop:", "  %r = phi i64 [ 0, %entry ], [ %r1, %body ]",
        "  %done = icmp uge i64 %r, %R", "  br i1 %done, label %exit, label %body", "body:",
        *body, *lines, "  %r1 = add i64 %r, 1", "  br label %loop", "exit:", "  ret void", "}"])


def _suffix(t: str) -> str:
    return "f32" if t == "float" else "f64"


#: the kernels, by (m, n, dtype) and (n, dtype)
_lu_kernels = KernelLibrary(lu_ir)
_cholesky_kernels = KernelLibrary(cholesky_ir)


def lu(a: np.ndarray) -> list[np.ndarray] | None:
    """[lu, pivots, perm] of a batch (..., m, n) of float32/float64 matrices, or None while
    the kernel for this shape is not ready (or tier 1 does not run here)."""
    *batch, m, n = a.shape
    fn = _lu_kernels.get((m, n, a.dtype.name))
    if fn is None:
        return None
    a = np.ascontiguousarray(a)
    count = a.size // (m * n)
    out = np.empty(a.shape, a.dtype)
    pivots = np.empty((*batch, min(m, n)), np.int32)
    perm = np.empty((*batch, m), np.int32)
    fn(count, 1, (ctypes.c_void_p * 4)(*map(data_pointer, (a, out, pivots, perm))))
    return [out, pivots, perm]


def cholesky(a: np.ndarray) -> np.ndarray | None:
    """The lower Cholesky factors of a batch (..., n, n) of float32/float64 matrices (upper
    triangles as given, NaNs where not positive definite), or None while the kernel for this
    shape is not ready (or tier 1 does not run here)."""
    n = a.shape[-1]
    fn = _cholesky_kernels.get((n, a.dtype.name))
    if fn is None:
        return None
    a = np.ascontiguousarray(a)
    out = np.empty(a.shape, a.dtype)
    fn(a.size // (n * n), 1, (ctypes.c_void_p * 2)(data_pointer(a), data_pointer(out)))
    return out
