"""The CPU's floating-point mode XLA computes in: subnormals flushed to zero (FTZ and DAZ).

XLA's CPU code runs with two bits of the x86 control register MXCSR set: FTZ (results too
small to be normal become 0) and DAZ (subnormal operands are read as 0), so under JAX
`1e-40 * 1e38` is 0 and `jnp.float32(1e-40) > 0` is False.  NumPy's loops and libm obey the
same bits, so pyjax sets them while it computes and clears them before control returns to the
caller, whose own NumPy and Python arithmetic must keep IEEE subnormals.

The register is per thread and must be switched around every eager operation, so the switch
has to cost next to nothing: the two switches are machine code (listed below) turned into
Python builtins (machine_code.py, ~40 ns a call; a ctypes call would cost 0.25 µs).  Where that
cannot be done both are Python no-ops and subnormals are kept, as NumPy keeps them:
`AVAILABLE` is False and `UNAVAILABLE` says why.

    flush_on(KEPT)      switch flushing on; returns KEPT when it was on before (a nested
                        pyjax call: the outer one switches it off), else SWITCHED
    flush_off()         switch flushing off

    if flush_on(KEPT) is SWITCHED:
        try: ...compute...
        finally: flush_off()
"""
from __future__ import annotations

from typing import Any, Callable

from pyjax._src.backend import machine_code

#: MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6) bits
FTZ_DAZ = 0x8040

# The two functions (machine_code.py: how CPython calls them).  MXCSR is read and written
# through the red zone below the stack pointer.
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


def _kept(kept: Any) -> Any:
    return kept


def _nothing() -> None:
    return None


UNAVAILABLE: str | None = machine_code.UNAVAILABLE
try:
    flush_on, flush_off = machine_code.builtins([
        ("flush_on", _FLUSH_ON, machine_code.METH_O, SWITCHED),
        ("flush_off", _FLUSH_OFF, machine_code.METH_NOARGS, _Marker("flush_off"))])
except (OSError, ValueError, AttributeError) as e:  # no executable memory, another platform
    UNAVAILABLE = str(e)
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
