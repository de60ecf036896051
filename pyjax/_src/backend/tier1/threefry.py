"""Threefry-2x32 as a native kernel: random bits at memory speed (issue 14).

The hash is 20 rounds of 32-bit adds, rotations and xors per counter pair, which NumPy runs as
~100 passes over the data (or, for a few counters, as Python integers).  Here one LLVM loop
does all rounds per element, vectorised by LLVM (rotations become `fshl`).  Integer arithmetic
only, so the bits are exactly those of the NumPy hash.  Each of the four operands is either one
value (a key, usually) or a full array; the pattern picks the kernel.  Kernels compile on
tier 1's background thread; `hash2x32` answers None until the one it needs is ready (or when
tier 1 does not run here), and the caller hashes with NumPy meanwhile.

The sample kernels (`sample`) hash the counters 0 .. n-1 of one key, made in the loop, and
reduce each hash pair to what `threefry_random_bits` draws from it, or further, for the
samplers' eager fast path (random/fast.py), to `uniform`'s floats in [0, 1) and to float32
`normal` samples: no counter array, one output, one call.  The `PAIRS` kernel keeps each hash
pair whole, as a new key: `split` and `fold_in` of one key (random/fast_keys.py).
"""
from __future__ import annotations

import ctypes
from typing import Callable, Sequence

import numpy as np

from pyjax._src.backend import host_memory
from pyjax._src.backend.machine_code import data_pointer
from pyjax._src.backend.tier1.library import KernelLibrary
from pyjax._src.backend.tier1.xla_math import _Builder, _f32

ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
PARITY = 0x1BD11BDA


def kernel_ir(scalar: Sequence[bool]) -> str:
    """LLVM IR of `kernel(rows, cols, ptrs)`: ptrs = k1, k2, x1, x2, out1, out2 (uint32);
    operand j is read at index 0 when scalar[j], else at each index of rows * cols."""
    head = ["entry:"]
    for j in range(6):
        head += [f"  %pp{j} = getelementptr ptr, ptr %args, i64 {j}",
                 f"  %p{j} = load ptr, ptr %pp{j}"]
    head.append("  %n = mul i64 %R, %C")
    names = ("k1", "k2", "x1", "x2")
    body = ["loop:", "  %i = phi i64 [ 0, %entry ], [ %i1, %body ]",
            "  %done = icmp uge i64 %i, %n", "  br i1 %done, label %exit, label %body",
            "body:"]
    for j, name in enumerate(names):
        if scalar[j]:
            head.append(f"  %{name} = load i32, ptr %p{j}")
        else:
            body += [f"  %{name}a = getelementptr i32, ptr %p{j}, i64 %i",
                     f"  %{name} = load i32, ptr %{name}a"]
    body += ["  %k12 = xor i32 %k1, %k2", f"  %k3 = xor i32 %k12, {PARITY}",
             "  %a0 = add i32 %x1, %k1", "  %b0 = add i32 %x2, %k2"]
    keys = ("%k1", "%k2", "%k3")
    a, b, t = "%a0", "%b0", 0
    for block in range(5):
        for r in ROTATIONS[block % 2]:
            t += 1
            body += [f"  %a{t} = add i32 {a}, {b}",
                     f"  %r{t} = call i32 @llvm.fshl.i32(i32 {b}, i32 {b}, i32 {r})",
                     f"  %b{t} = xor i32 %r{t}, %a{t}"]
            a, b = f"%a{t}", f"%b{t}"
        body += [f"  %ka{block} = add i32 {a}, {keys[(block + 1) % 3]}",
                 f"  %kb{block} = add i32 {b}, {keys[(block + 2) % 3]}",
                 f"  %kc{block} = add i32 %kb{block}, {block + 1}"]
        a, b = f"%ka{block}", f"%kc{block}"
    body += ["  %o1 = getelementptr i32, ptr %p4, i64 %i", f"  store i32 {a}, ptr %o1",
             "  %o2 = getelementptr i32, ptr %p5, i64 %i", f"  store i32 {b}, ptr %o2",
             "  %i1 = add i64 %i, 1", "  br label %loop", "exit:", "  ret void"]
    return "\n".join(["declare i32 @llvm.fshl.i32(i32, i32, i32)", "",
                      'define void @kernel(i64 %R, i64 %C, ptr noalias %args) #0 {',
                      *head, "  br label %loop", *body, "}", "",
                      'attributes #0 = { nounwind "prefer-vector-width"="512" }'])


#: the kernels, by which operands are one value (k1, k2, x1, x2)
_library = KernelLibrary(kernel_ir)


def hash2x32(k1: np.ndarray, k2: np.ndarray, x1: np.ndarray, x2: np.ndarray,
             size: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The hash of flat uint32 operands (each 0-d or of `size` elements, C-contiguous) as two
    flat arrays, or None when no kernel for this pattern is ready."""
    fn = _library.get((k1.ndim == 0, k2.ndim == 0, x1.ndim == 0, x2.ndim == 0))
    if fn is None:
        return None
    out1, out2 = (host_memory.empty((size,), np.dtype(np.uint32)),
                  host_memory.empty((size,), np.dtype(np.uint32)))
    ops = [np.ascontiguousarray(v) for v in (k1, k2, x1, x2)]
    pointers = (ctypes.c_void_p * 6)(*[data_pointer(a) for a in (*ops, out1, out2)])
    fn(1, size, pointers)
    return out1, out2


# ---------------------------------------------------------------------------------------------
# Samples of one key: the counters (0, i) made in the loop, the hash pair reduced to bits and,
# for the samplers' eager fast path (random/fast.py), to floats
# ---------------------------------------------------------------------------------------------

_F32_ONE, _F64_ONE = 0x3F800000, 0x3FF0000000000000
#: the kind of the kernel of new keys (see `sample_kernel_ir`)
PAIRS = ("pairs", "u32")


def _hash_lines(counter: str = "%i") -> tuple[list[str], str, str]:
    """The loop body hashing counter (0, `counter`) under (%k1, %k2, %k3): lines, the pair's
    names."""
    lines = [f"  %x2 = trunc i64 {counter} to i32", "  %a0 = add i32 %k1, 0",
             "  %b0 = add i32 %x2, %k2"]
    keys = ("%k1", "%k2", "%k3")
    a, b, t = "%a0", "%b0", 0
    for block in range(5):
        for r in ROTATIONS[block % 2]:
            t += 1
            lines += [f"  %a{t} = add i32 {a}, {b}",
                      f"  %r{t} = call i32 @llvm.fshl.i32(i32 {b}, i32 {b}, i32 {r})",
                      f"  %b{t} = xor i32 %r{t}, %a{t}"]
            a, b = f"%a{t}", f"%b{t}"
        lines += [f"  %ka{block} = add i32 {a}, {keys[(block + 1) % 3]}",
                  f"  %kb{block} = add i32 {b}, {keys[(block + 2) % 3]}",
                  f"  %kc{block} = add i32 %kb{block}, {block + 1}"]
        a, b = f"%ka{block}", f"%kc{block}"
    return lines, a, b


def _word_lines(bit_width: int, a: str, b: str) -> tuple[list[str], str]:
    """`threefry_random_bits`'s word from the hash pair: xored (its low bits for 8 and 16) or,
    for 64 bits, (first << 32) | second."""
    if bit_width == 64:
        return [f"  %hi = zext i32 {a} to i64", "  %hs = shl i64 %hi, 32",
                f"  %lo = zext i32 {b} to i64", "  %w = or i64 %hs, %lo"], "%w"
    lines = [f"  %w32 = xor i32 {a}, {b}"]
    if bit_width < 32:
        return lines + [f"  %w = trunc i32 %w32 to i{bit_width}"], "%w"
    return lines, "%w32"


def sample_kernel_ir(kind: tuple) -> str:
    """LLVM IR of `kernel(rows, cols, ptrs)`: ptrs = key (two uint32), out (rows * cols
    values); out[i] is made from the hash of counter (0, i) under the key (n <= 2**32):

    ("bits", w)      the w-bit word `threefry_random_bits` draws;
    ("unit", "f32")  `_uniform`'s floats before minval/maxval: the float32 of the word's top 23
    ("unit", "f64")  (float64: 52) bits under the exponent of 1.0, minus 1, as its jaxpr has it
                     (shift, or, bitcast, subtract: every step exact);
    ("normal", "f32")  `_normal_real`'s float32 sample: u = 2 * unit + (-1 + 2**-24), which is
                     the fused multiply-add by 1 - lo = 2.0 (exact products: it rounds once as
                     the multiply-add does) and never below lo (so `max(lo, u)` is u), then
                     XLA's erf_inv of u (tier1/xla_math.py's code, the native erf_inv kernel's
                     operations) times sqrt(2) in float32.

    `PAIRS` is the one kernel read differently, `kernel(start, n, ptrs)`: out (uint32[n, 2])
    gets the hash pair of counter (0, start + i) (start + n <= 2**32), which is the key
    `threefry_split` makes (start 0) or `threefry_fold_in` (start: the message, n = 1)."""
    what, arg = kind
    pairs = kind == PAIRS
    body, a, b = _hash_lines("%c" if pairs else "%i")
    decls = ["declare i32 @llvm.fshl.i32(i32, i32, i32)"]
    if pairs:
        body.insert(0, "  %c = add i64 %R, %i")
        store = ["  %j = shl i64 %i, 1", "  %oa = getelementptr i32, ptr %po, i64 %j",
                 f"  store i32 {a}, ptr %oa", "  %ob = getelementptr i32, ptr %oa, i64 1",
                 f"  store i32 {b}, ptr %ob"]
    elif what == "bits":
        lines, word = _word_lines(arg, a, b)
        body += lines
        out_type, value = f"i{arg}", word
    elif arg == "f64":
        lines, word = _word_lines(64, a, b)
        body += lines + ["  %m = lshr i64 %w, 12", f"  %o = or i64 %m, {_F64_ONE}",
                         "  %f1 = bitcast i64 %o to double", "  %f = fsub double %f1, 1.0"]
        out_type, value = "double", "%f"
    else:
        lines, word = _word_lines(32, a, b)
        body += lines + ["  %m = lshr i32 %w32, 9", f"  %o = or i32 %m, {_F32_ONE}",
                         "  %f1 = bitcast i32 %o to float",
                         f"  %f = fsub float %f1, {_f32(1.0)}"]
        out_type, value = "float", "%f"
        if what == "normal":
            lo = float(np.nextafter(np.float32(-1), np.float32(0)))
            body += [f"  %t = fmul float %f, {_f32(2.0)}", f"  %u = fadd float %t, {_f32(lo)}"]
            builder = _Builder()
            erf_inv = builder.erf_inv("%u")
            body += builder.lines + [f"  %y = fmul float {_f32(np.sqrt(2))}, {erf_inv}"]
            value = "%y"
            decls += ["declare float @llvm.fma.f32(float, float, float)",
                      "declare float @llvm.fabs.f32(float)", "declare float @llvm.sqrt.f32(float)"]
    if not pairs:
        store = [f"  %oa = getelementptr {out_type}, ptr %po, i64 %i",
                 f"  store {out_type} {value}, ptr %oa"]
    head = ["entry:", "  %pk = load ptr, ptr %args", "  %ppo = getelementptr ptr, ptr %args, i64 1",
            "  %po = load ptr, ptr %ppo", *([] if pairs else ["  %n = mul i64 %R, %C"]),
            "  %k1 = load i32, ptr %pk", "  %pk2 = getelementptr i32, ptr %pk, i64 1",
            "  %k2 = load i32, ptr %pk2", "  %k12 = xor i32 %k1, %k2",
            f"  %k3 = xor i32 %k12, {PARITY}", "  br label %loop",
            "loop:", "  %i = phi i64 [ 0, %entry ], [ %i1, %body ]",
            f"  %done = icmp uge i64 %i, {'%C' if pairs else '%n'}",
            "  br i1 %done, label %exit, label %body", "body:"]
    tail = [*store, "  %i1 = add i64 %i, 1", "  br label %loop", "exit:", "  ret void"]
    return "\n".join([*decls, "", 'define void @kernel(i64 %R, i64 %C, ptr noalias %args) #0 {',
                      *head, *body, *tail, "}", "",
                      'attributes #0 = { nounwind "prefer-vector-width"="512" }'])


#: the sample kernels, by kind
_samples = KernelLibrary(sample_kernel_ir)
OUT_DTYPES = {("bits", 8): np.dtype(np.uint8), ("bits", 16): np.dtype(np.uint16),
               ("bits", 32): np.dtype(np.uint32), ("bits", 64): np.dtype(np.uint64),
               ("unit", "f32"): np.dtype(np.float32), ("unit", "f64"): np.dtype(np.float64),
               ("normal", "f32"): np.dtype(np.float32)}
TWO_POINTERS = ctypes.c_void_p * 2


def sample_kernel(kind: tuple) -> Callable | None:
    """The compiled kernel of `kind`, or None while it is not ready (compiling it starts on
    the first ask).  `fn(1, n, TWO_POINTERS(data_pointer(key), data_pointer(out)))` fills the
    C-contiguous `out` of n values of `OUT_DTYPES[kind]` (`PAIRS`: `fn(start, n, ...)` fills
    uint32[n, 2], see `sample_kernel_ir`)."""
    return _samples.get(kind)


def sample(key: np.ndarray, kind: tuple, size: int) -> np.ndarray | None:
    """The `size` values of `kind` (see `sample_kernel_ir`) under one key (a C-contiguous
    uint32[2]) as a flat array, or None while that kernel is not ready (size <= 2**32)."""
    fn = _samples.get(kind)
    if fn is None:
        return None
    out = host_memory.empty((size,), OUT_DTYPES[kind])
    fn(1, size, TWO_POINTERS(data_pointer(key), data_pointer(out)))
    return out


def random_bits(key: np.ndarray, bit_width: int, size: int) -> np.ndarray | None:
    """`sample(key, ("bits", bit_width), size)`: the random words of one key."""
    return sample(key, ("bits", bit_width), size)
