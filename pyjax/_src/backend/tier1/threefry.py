"""Threefry-2x32 as a native kernel: random bits at memory speed (issue 14).

The hash is 20 rounds of 32-bit adds, rotations and xors per counter pair, which NumPy runs as
~100 passes over the data (or, for a few counters, as Python integers).  Here one LLVM loop
does all rounds per element, vectorised by LLVM (rotations become `fshl`).  Integer arithmetic
only, so the bits are exactly those of the NumPy hash.  Each of the four operands is either one
value (a key, usually) or a full array; the pattern picks the kernel.  Kernels compile on
tier 1's background thread; `hash2x32` answers None until the one it needs is ready (or when
tier 1 does not run here), and the caller hashes with NumPy meanwhile.
"""
from __future__ import annotations

import ctypes
from typing import Sequence

import numpy as np

from pyjax._src.backend.machine_code import data_pointer
from pyjax._src.backend.tier1.library import KernelLibrary

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
    out1, out2 = np.empty(size, np.uint32), np.empty(size, np.uint32)
    ops = [np.ascontiguousarray(v) for v in (k1, k2, x1, x2)]
    pointers = (ctypes.c_void_p * 6)(*[data_pointer(a) for a in (*ops, out1, out2)])
    fn(1, size, pointers)
    return out1, out2
