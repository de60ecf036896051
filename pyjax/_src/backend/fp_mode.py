"""The CPU's floating-point mode XLA computes in: subnormals flushed to zero (FTZ and DAZ).

XLA's CPU code runs with two bits of the x86 control register MXCSR set: FTZ (results too
small to be normal become 0) and DAZ (subnormal operands are read as 0), so under JAX
`1e-40 * 1e38` is 0 and `jnp.float32(1e-40) > 0` is False.  NumPy's loops and libm obey the
same bits, so pyjax sets them while it computes and clears them before control returns to the
caller, whose own NumPy and Python arithmetic must keep IEEE subnormals.

The register is per thread and must be switched around every eager operation, so the switch
has to cost next to nothing: a ctypes call costs 0.25 µs, twice per operation a tenth of an
eager `x + y`.  The two switches are therefore machine code (listed below, assembled once by
`as`) turned into Python builtin functions with `PyCFunction_NewEx`, which CPython calls
directly (~40 ns each).  Where that cannot be done (not x86-64 Linux, a free-threaded
CPython, no executable memory) both are Python no-ops and subnormals are kept, as NumPy does:
`AVAILABLE` is False and `UNAVAILABLE` says why.

    flush_on(KEPT)      switch flushing on; returns KEPT when it was on before (a nested
                        pyjax call: the outer one switches it off), else SWITCHED
    flush_off()         switch flushing off

    if flush_on(KEPT) is SWITCHED:
        try: ...compute...
        finally: flush_off()
"""
from __future__ import annotations

import sys
from typing import Any, Callable

#: MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6) bits
FTZ_DAZ = 0x8040

# The two functions, System V x86-64 ABI, as CPython calls a builtin function:
# PyObject *fn(PyObject *self, PyObject *arg) returning a new reference.  MXCSR is read and
# written through the red zone below the stack pointer.
#
# flush_on (METH_O: arg is KEPT)                    flush_off (METH_NOARGS)
#   stmxcsr -4(%rsp)                               stmxcsr -4(%rsp)
#   movl    -4(%rsp), %eax                         andl    $0xffff7fbf, -4(%rsp)
#   movl    %eax, %ecx                             ldmxcsr -4(%rsp)
#   orl     $0x8040, %ecx                          movq    %rdi, %rax
#   cmpl    %eax, %ecx                             incq    (%rax)     # Py_INCREF(self)
#   je      1f            # both bits already on   ret
#   movl    %ecx, -4(%rsp)
#   ldmxcsr -4(%rsp)
#   movq    %rdi, %rax    # return self (SWITCHED)
#   incq    (%rax)
#   ret
# 1: movq   %rsi, %rax    # return arg (KEPT)
#   incq    (%rax)
#   ret
_FLUSH_ON = bytes.fromhex(
    "0fae5c24fc" "8b4424fc" "89c1" "81c940800000" "39c1" "7410" "894c24fc" "0fae5424fc"
    "4889f8" "48ff00" "c3" "4889f0" "48ff00" "c3")
_FLUSH_OFF = bytes.fromhex("0fae5c24fc" "816424fcbf7fffff" "0fae5424fc" "4889f8" "48ff00" "c3")

_METH_NOARGS, _METH_O = 0x0004, 0x0008


class _Marker:
    """What `flush_on` returns.  A plain object, never an immortal one such as None: the
    machine code increments its reference count directly."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


SWITCHED: Any = _Marker("SWITCHED")
KEPT: Any = _Marker("KEPT")
#: what keeps the executable page and the method definitions alive (builtins point into them)
_keep: list = []


def _unsupported() -> str | None:
    """Why the machine code cannot run here, or None."""
    import platform
    import sysconfig
    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "AMD64"):
        return f"the MXCSR switch is x86-64 Linux code ({sys.platform}, {platform.machine()})"
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        return "a free-threaded CPython counts references differently"
    return None


def _builtins() -> tuple[Callable, Callable]:
    """flush_on and flush_off as builtin functions over the machine code."""
    import ctypes
    import mmap

    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(_FLUSH_ON + _FLUSH_OFF)
    base = ctypes.addressof(ctypes.c_char.from_buffer(page))

    class MethodDef(ctypes.Structure):
        _fields_ = [("name", ctypes.c_char_p), ("meth", ctypes.c_void_p),
                    ("flags", ctypes.c_int), ("doc", ctypes.c_char_p)]

    new = ctypes.pythonapi.PyCFunction_NewEx
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.POINTER(MethodDef), ctypes.py_object, ctypes.py_object]
    on_def = MethodDef(b"flush_on", base, _METH_O, b"Set MXCSR's FTZ and DAZ bits.")
    off_def = MethodDef(b"flush_off", base + len(_FLUSH_ON), _METH_NOARGS,
                        b"Clear MXCSR's FTZ and DAZ bits.")
    flush_off_self = _Marker("flush_off")  # flush_off returns its self
    _keep.extend((page, on_def, off_def))
    return new(on_def, SWITCHED, None), new(off_def, flush_off_self, None)


def _kept(kept: Any) -> Any:
    return kept


def _nothing() -> None:
    return None


UNAVAILABLE: str | None = _unsupported()
if UNAVAILABLE is None:
    try:
        flush_on, flush_off = _builtins()
    except (OSError, ValueError, AttributeError) as e:  # no executable memory, say
        UNAVAILABLE = f"no executable memory for the MXCSR switch ({e})"
if UNAVAILABLE is not None:
    flush_on, flush_off = _kept, _nothing
AVAILABLE = UNAVAILABLE is None


def run_flushing(fn: Callable, *args: Any) -> Any:
    """fn(*args) with subnormals flushed (for call sites off the hot path)."""
    if flush_on(KEPT) is not SWITCHED:
        return fn(*args)
    try:
        return fn(*args)
    finally:
        flush_off()


def run_unflushed(fn: Callable, *args: Any) -> Any:
    """fn(*args) with subnormals kept, inside an operation that flushes them (an eager
    debug callback, which JAX runs in Python rather than in an XLA program)."""
    if flush_on(KEPT) is SWITCHED:  # flushing was off: leave it off
        flush_off()
        return fn(*args)
    flush_off()
    try:
        return fn(*args)
    finally:
        flush_on(KEPT)
