"""SVD and symmetric eigendecomposition of a batch of small matrices: one native loop over
the batch calling LAPACK, shared by the cores as XLA shares JAX's batched LAPACK calls.

The routines are JAX's CPU ones (gesdd with jobz A/S/N; syevd/heevd with jobz V), taken from
SciPy's LAPACK through the function pointers `scipy.linalg.cython_lapack` exports, as jaxlib
takes them.  Each matrix is copied into Fortran order, decomposed, and its vectors copied back
to row-major order, so every result is the bits of one LAPACK call on that matrix, as in JAX
and as NumPy's gufuncs (the path before the kernel is ready) give.  A failed matrix
(info != 0) becomes NaNs, as JAX has it.

A 4x4 matrix costs ~3.6 µs (gesdd) or ~1.8 µs (syevd) inside LAPACK alone, spread over
gebrd, bdsdc/steqr, ormbr and their BLAS calls: the whole of NumPy's gufunc time, and JAX's
per matrix too; JAX is faster only by running its batch on every core.  So up to
`engine.threads()` threads run one call, each querying its workspace once and then taking a
few matrices at a time from a shared counter.  They are Python helper threads rather than
libgomp's team (codegen's parallel kernels): the caller waits only for matrices a helper has
taken, never for a helper a busy core has not yet run, where GOMP_parallel's join made a
1000x4x4 batch 2-4x slower than one thread on a loaded 2-core machine (as fast idle).
"""
from __future__ import annotations

import ctypes
import functools
import os
import queue
import threading
from typing import Callable

import numpy as np

from pyjax._src.backend import fp_mode
from pyjax._src.backend.machine_code import data_pointer
from pyjax._src.backend.tier1 import engine
from pyjax._src.backend.tier1.library import KernelLibrary

#: per dtype: the integer type that copies one element, its alignment, the real type, LAPACK's
#: prefix
_TYPES = {
    np.dtype(np.float32): ("i32", 4, "float", "s"),
    np.dtype(np.float64): ("i64", 8, "double", "d"),
    np.dtype(np.complex64): ("i64", 4, "float", "c"),
    np.dtype(np.complex128): ("<2 x i64>", 8, "double", "z"),
}


class _Ir:
    """The text of one kernel `kernel(rows, cols, args)`: rows = the matrices, cols = how many
    to take at a time; args = the LAPACK routine, the counters (int64: matrices taken,
    matrices done) shared by every thread running the call, then a pointer per array, each
    advanced per matrix."""

    def __init__(self, dtype: np.dtype, arrays: list[tuple[str, str, int]]) -> None:
        self.e, self.align, self.r, _ = _TYPES[np.dtype(dtype)]
        self.complex = np.dtype(dtype).kind == "c"
        self.entry = ["entry:", "  %fn = load ptr, ptr %args",
                      "  %taken.at = getelementptr ptr, ptr %args, i64 1",
                      "  %taken = load ptr, ptr %taken.at",
                      "  %finished = getelementptr i64, ptr %taken, i64 1"]
        self.body: list[str] = []
        self.count = 0
        self.arrays = arrays  # (name, type, elements per matrix)
        for j, (name, _, _) in enumerate(arrays, 2):
            self.entry += [f"  %{name}.at = getelementptr ptr, ptr %args, i64 {j}",
                           f"  %{name}.base = load ptr, ptr %{name}.at"]

    def tmp(self) -> str:
        self.count += 1
        return f"%t{self.count}"

    def const(self, ty: str, value: int) -> str:
        """A pointer to a constant argument (LAPACK takes every argument by reference)."""
        p = self.tmp()
        self.entry += [f"  {p} = alloca {ty}", f"  store {ty} {value}, ptr {p}"]
        return p

    def buffer(self, ty: str, count: int | str) -> str:
        p = self.tmp()
        self.entry.append(f"  {p} = alloca {ty}, i32 {count}, align 16")
        return p

    def workspace(self, query_at: str, ty: str, length_at: str, element: str) -> str:
        """A buffer of as many `element`s as the workspace query left at `query_at` (a `ty`),
        that length (at least 1) stored at `length_at` for the calls."""
        size, length, p = self.tmp(), self.tmp(), self.tmp()
        if ty == "i32":
            self.entry.append(f"  {size} = load i32, ptr {query_at}")
        else:
            v = self.tmp()
            self.entry += [f"  {v} = load {ty}, ptr {query_at}",
                           f"  {size} = fptosi {ty} {v} to i32"]
        self.entry += [f"  {length} = call i32 @llvm.smax.i32(i32 {size}, i32 1)",
                       f"  store i32 {length}, ptr {length_at}",
                       f"  {p} = alloca {element}, i32 {length}, align 16"]
        return p

    def call(self, lines: list[str], args: list[str]) -> None:
        lines.append(f"  call void %fn({', '.join(f'ptr {a}' for a in args)})")

    def copy(self, dst: str, dst_strides: tuple[int, int], src: str,
             src_strides: tuple[int, int], rows: int, cols: int) -> None:
        """dst[i, j] = src[i, j] for a rows x cols matrix, each with its strides."""
        t = self.tmp()[1:]
        e, a = self.e, self.align
        self.body += [
            f"  br label %{t}.loop", f"{t}.loop:",
            f"  %{t}.k = phi i64 [ 0, %{self.block} ], [ %{t}.k1, %{t}.loop ]",
            f"  %{t}.i = udiv i64 %{t}.k, {cols}", f"  %{t}.j = urem i64 %{t}.k, {cols}",
            f"  %{t}.si = mul i64 %{t}.i, {src_strides[0]}",
            f"  %{t}.sj = mul i64 %{t}.j, {src_strides[1]}",
            f"  %{t}.s = add i64 %{t}.si, %{t}.sj",
            f"  %{t}.di = mul i64 %{t}.i, {dst_strides[0]}",
            f"  %{t}.dj = mul i64 %{t}.j, {dst_strides[1]}",
            f"  %{t}.d = add i64 %{t}.di, %{t}.dj",
            f"  %{t}.sp = getelementptr {e}, ptr {src}, i64 %{t}.s",
            f"  %{t}.dp = getelementptr {e}, ptr {dst}, i64 %{t}.d",
            f"  %{t}.v = load {e}, ptr %{t}.sp, align {a}",
            f"  store {e} %{t}.v, ptr %{t}.dp, align {a}",
            f"  %{t}.k1 = add i64 %{t}.k, 1",
            f"  %{t}.more = icmp ult i64 %{t}.k1, {rows * cols}",
            f"  br i1 %{t}.more, label %{t}.loop, label %{t}.done", f"{t}.done:"]
        self.block = f"{t}.done"

    def start_body(self) -> None:
        """Open the loop's body: each array's pointer to this matrix's part."""
        self.block = "body"
        for name, ty, size in self.arrays:
            self.body += [f"  %{name}.off = mul i64 %r, {size}",
                          f"  %{name} = getelementptr {ty}, ptr %{name}.base, i64 %{name}.off"]

    def text(self) -> str:
        """The module: the entry (constants, the workspace query), then the loop taking C
        matrices at a time until none is left."""
        return "\n".join([
            "declare i32 @llvm.smax.i32(i32, i32)", "declare i64 @llvm.umin.i64(i64, i64)", "",
            "define void @kernel(i64 %R, i64 %C, ptr noalias %args) {", *self.entry,
            "  br label %take", "take:", "  %first = atomicrmw add ptr %taken, i64 %C seq_cst",
            "  %none = icmp uge i64 %first, %R", "  br i1 %none, label %exit, label %some",
            "some:", "  %after = add i64 %first, %C",
            "  %end = call i64 @llvm.umin.i64(i64 %after, i64 %R)", "  br label %loop",
            "loop:", "  %r = phi i64 [ %first, %some ], [ %r1, %next ]",
            "  %done = icmp uge i64 %r, %end", "  br i1 %done, label %counted, label %body",
            "body:", *self.body, "  br label %next", "next:", "  %r1 = add i64 %r, 1",
            "  br label %loop", "counted:", "  %these = sub i64 %end, %first",
            "  %old = atomicrmw add ptr %finished, i64 %these seq_cst", "  br label %take",
            "exit:", "  ret void", "}"])


def _svd_shapes(m: int, n: int, job: str) -> tuple[int, int, int, int]:
    """(columns of u, its leading dimension, rows of vt, its leading dimension) for jobz."""
    k = min(m, n)
    return {"A": (m, m, n, n), "S": (k, m, k, k), "N": (0, 1, 0, 1)}[job]


def svd_ir(key: tuple) -> str:
    """gesdd over the batch; args = routine, a (m, n), s (k), [u (m, ucol), vt (vrow, n),]
    info (int32)."""
    m, n, dtype, job = key
    dt = np.dtype(dtype)
    e, _, r, _ = _TYPES[dt]
    k = min(m, n)
    ucol, ldu, vrow, ldvt = _svd_shapes(m, n, job)
    vectors = [("u", e, m * ucol), ("vt", e, vrow * n)] if job != "N" else []
    ir = _Ir(dt, [("a", e, m * n), ("s", r, k), *vectors, ("info", "i32", 1)])
    jobz, pm, pn = ir.const("i8", ord(job)), ir.const("i32", m), ir.const("i32", n)
    lda, pldu, pldvt = ir.const("i32", max(m, 1)), ir.const("i32", ldu), ir.const("i32", ldvt)
    lwork, info = ir.const("i32", -1), ir.buffer("i32", 1)
    fa, fu = ir.buffer(e, m * n), ir.buffer(e, max(ldu * ucol, 1))
    fvt, iwork = ir.buffer(e, max(ldvt * n, 1)), ir.buffer("i32", 8 * k)
    sq, q = ir.buffer(r, k), ir.buffer(r, 2)
    # cgesdd's real workspace, by LAPACK's bound for every jobz (it is not queried)
    rwork = [ir.buffer(r, max(7 * k, 5 * k * k + 7 * k, 2 * max(m, n) * k + 2 * k * k + k))
             ] if ir.complex else []
    head, vectors_at = [jobz, pm, pn, fa, lda], [fu, pldu, fvt, pldvt]
    ir.call(ir.entry, [*head, sq, *vectors_at, q, lwork, *rwork, iwork, info])
    work = ir.workspace(q, r, lwork, e)
    ir.start_body()
    ir.copy(fa, (1, m), "%a", (n, 1), m, n)
    ir.call(ir.body, [*head, "%s", *vectors_at, work, lwork, *rwork, iwork, "%info"])
    if job != "N":
        ir.copy("%u", (ucol, 1), fu, (1, ldu), m, ucol)
        ir.copy("%vt", (n, 1), fvt, (1, ldvt), vrow, n)
    return ir.text()


def eigh_ir(key: tuple) -> str:
    """syevd/heevd over the batch; args = routine, a (n, n), v (n, n), w (n), info (int32)."""
    n, dtype, lower = key
    dt = np.dtype(dtype)
    e, _, r, _ = _TYPES[dt]
    ir = _Ir(dt, [("a", e, n * n), ("v", e, n * n), ("w", r, n), ("info", "i32", 1)])
    jobz, uplo = ir.const("i8", ord("V")), ir.const("i8", ord("L" if lower else "U"))
    pn, lda = ir.const("i32", n), ir.const("i32", n)
    lwork, liwork, info = ir.const("i32", -1), ir.const("i32", -1), ir.buffer("i32", 1)
    fa, wq, q, iq = ir.buffer(e, n * n), ir.buffer(r, n), ir.buffer(r, 2), ir.buffer("i32", 1)
    head = [jobz, uplo, pn, fa, lda]
    lrwork, rq = (ir.const("i32", -1), ir.buffer(r, 1)) if ir.complex else ("", "")
    query_rwork = [rq, lrwork] if ir.complex else []
    ir.call(ir.entry, [*head, wq, q, lwork, *query_rwork, iq, liwork, info])
    work, iwork = ir.workspace(q, r, lwork, e), ir.workspace(iq, "i32", liwork, "i32")
    rwork = [ir.workspace(rq, r, lrwork, r), lrwork] if ir.complex else []
    ir.start_body()
    ir.copy(fa, (1, n), "%a", (n, 1), n, n)
    ir.call(ir.body, [*head, "%w", work, lwork, *rwork, iwork, liwork, "%info"])
    ir.copy("%v", (n, 1), fa, (1, n), n, n)
    return ir.text()


#: the kernels, by (m, n, dtype, jobz) and (n, dtype, lower)
_svd_kernels = KernelLibrary(svd_ir)
_eigh_kernels = KernelLibrary(eigh_ir)


@functools.cache
def _routine(name: str) -> int:
    """The address of SciPy's LAPACK routine `name` (a PyCapsule of cython_lapack)."""
    from scipy.linalg import cython_lapack  # noqa: PLC0415 - SciPy loads on first use
    capsule = cython_lapack.__pyx_capi__[name]
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))


def svd(a: np.ndarray, full_matrices: bool, compute_uv: bool) -> list[np.ndarray] | None:
    """[s, u, vt] (or [s]) of a batch (..., m, n) of matrices, LAPACK's gesdd on each, or None
    while the kernel for this shape is not ready (or tier 1 does not run here)."""
    *batch, m, n = a.shape
    job = "N" if not compute_uv else "A" if full_matrices else "S"
    fn = _svd_kernels.get((m, n, a.dtype.name, job))
    if fn is None:
        return None
    ucol, _, vrow, _ = _svd_shapes(m, n, job)
    s = np.empty((*batch, min(m, n)), np.finfo(a.dtype).dtype)
    outs = [s] + ([np.empty((*batch, m, ucol), a.dtype), np.empty((*batch, vrow, n), a.dtype)]
                  if compute_uv else [])
    _run(fn, _TYPES[a.dtype][3] + "gesdd", a, outs)
    return outs


def eigh(a: np.ndarray, lower: bool) -> list[np.ndarray] | None:
    """[v, w] (eigenvectors in columns, eigenvalues ascending) of a batch (..., n, n) of
    Hermitian matrices read through one triangle, LAPACK's syevd/heevd on each, or None while
    the kernel for this shape is not ready (or tier 1 does not run here)."""
    n = a.shape[-1]
    fn = _eigh_kernels.get((n, a.dtype.name, bool(lower)))
    if fn is None:
        return None
    outs = [np.empty(a.shape, a.dtype), np.empty(a.shape[:-1], np.finfo(a.dtype).dtype)]
    _run(fn, _TYPES[a.dtype][3] + ("heevd" if a.dtype.kind == "c" else "syevd"), a, outs)
    return outs


def _run(fn: Callable, routine: str, a: np.ndarray, outs: list[np.ndarray]) -> None:
    """fn over the batch of a (and outs), here and, for a large batch, on helper threads,
    each taking a few matrices at a time until none is left (a thread that a busy core holds
    up takes fewer); matrices LAPACK failed on become NaNs."""
    a = np.ascontiguousarray(a)
    count = a.size // (a.shape[-2] * a.shape[-1])
    info = np.empty(count, np.int32)
    counters = np.zeros(2, np.int64)  # matrices taken, matrices done
    arrays = [a, *outs, info]
    args = (ctypes.c_void_p * (len(arrays) + 2))(
        _routine(routine), *(data_pointer(x) for x in (counters, *arrays)))
    cost = _cost(a)
    threads = min(engine.threads()[0], max(1, count * cost // _GRAIN_NS))
    per_take = count if threads == 1 else max(1, _TAKE_NS // cost)
    done = threading.Semaphore(0)
    if threads > 1:
        _start_helpers(threads - 1)
        flushing = fp_mode.flush_on(fp_mode.KEPT) is fp_mode.KEPT
        if not flushing:
            fp_mode.flush_off()
        for _ in range(threads - 1):  # the job keeps the buffers alive until it has run
            _jobs.put((fn, count, per_take, args, flushing, done, arrays, counters))
    fn(count, per_take, args)
    while counters[1] < count:  # a helper is finishing the matrices it took
        done.acquire()
    failed = info != 0
    if failed.any():  # NaNs (NaN + NaN j where complex), as JAX fills them
        for out in outs:
            out.reshape(count, -1)[failed] = complex(np.nan, np.nan) if out.dtype.kind == "c" \
                else np.nan


#: the least work (ns) worth a thread of its own: a hand-off costs ~20 µs
_GRAIN_NS = 100_000
#: the work (ns) a thread takes at a time
_TAKE_NS = 25_000


def _cost(a: np.ndarray) -> int:
    """LAPACK's time (ns) on one matrix of a, roughly (gesdd's, measured: 4x4 ~3 µs, 16x16
    ~70-130 µs; syevd's is about half)."""
    m, n = a.shape[-2:]
    return 1000 + 25 * m * n * min(m, n)


_jobs: "queue.SimpleQueue" = queue.SimpleQueue()
_helpers: list[threading.Thread] = []
_helpers_lock = threading.Lock()


def _help() -> None:
    """A helper thread: runs kernel calls beside their callers, flushing subnormals as the
    caller does."""
    while True:
        fn, count, per_take, args, flushing, done, _, _ = _jobs.get()
        if flushing:
            fp_mode.flush_on(fp_mode.KEPT)
        else:
            fp_mode.flush_off()
        fn(count, per_take, args)
        done.release()


def _start_helpers(n: int) -> None:
    """At least n helper threads running."""
    with _helpers_lock:
        while len(_helpers) < n:
            _helpers.append(threading.Thread(target=_help, name="pyjax-lapack", daemon=True))
            _helpers[-1].start()


# helper threads do not survive fork: a forked child starts its own
os.register_at_fork(after_in_child=_helpers.clear)
