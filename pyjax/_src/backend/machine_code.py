"""A few x86-64 instructions as Python builtin functions, for the two switches of fp_mode.py,
the buffer addresses tier 1 passes to its kernels and the calls of its kernels.

A ctypes call costs 0.25 µs and `ndarray.__array_interface__` 1.6 µs; the hot paths that need
them (every eager operation; every native kernel call) cannot afford that.  CPython calls a
builtin function straight through a C function pointer, so a handful of bytes in an
executable page, wrapped by `PyCFunction_NewEx`, costs ~40 ns a call.  Each function follows
the System V ABI as CPython calls a builtin: PyObject *fn(PyObject *self, PyObject *arg) in
rdi, rsi, returning a new reference in rax.  Only x86-64 Linux, and CPythons that count
references in the object header (not free-threaded builds); elsewhere `UNAVAILABLE` says why
and callers use their portable fallback.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Sequence

METH_NOARGS, METH_O, METH_FASTCALL = 0x0004, 0x0008, 0x0080

#: keeps the executable pages and the method definitions alive (builtins point into them)
_keep: list = []


def _unsupported() -> str | None:
    """Why the machine code cannot run here, or None."""
    import platform
    import sysconfig
    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "AMD64"):
        return f"the machine code is x86-64 Linux code ({sys.platform}, {platform.machine()})"
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        return "a free-threaded CPython counts references differently"
    return None


UNAVAILABLE: str | None = _unsupported()


def c_address(name: str) -> int:
    """The address of a function of the CPython C API (to call from machine code)."""
    import ctypes
    return ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value


def _method_definitions(specs: Sequence[tuple[str, bytes, int]]) -> list[Any]:
    """PyMethodDefs (kept alive with the process) of (name, code, METH_* flag) each, their
    code all in one executable page.  Raises OSError or ValueError where that cannot be
    done."""
    import ctypes
    import mmap

    if UNAVAILABLE is not None:
        raise OSError(UNAVAILABLE)
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    base = ctypes.addressof(ctypes.c_char.from_buffer(page))

    class MethodDef(ctypes.Structure):
        _fields_ = [("name", ctypes.c_char_p), ("meth", ctypes.c_void_p),
                    ("flags", ctypes.c_int), ("doc", ctypes.c_char_p)]

    definitions, offset = [], 0
    for name, code, flags in specs:
        page[offset:offset + len(code)] = code
        definitions.append(MethodDef(name.encode(), base + offset, flags, None))
        offset += (len(code) + 15) // 16 * 16
    _keep.extend((page, *definitions))
    return definitions


def _function(definition: Any, self: Any) -> Callable:
    """The builtin function of a method definition, bound to `self` (its first argument)."""
    import ctypes
    new = ctypes.pythonapi.PyCFunction_NewEx
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]
    return new(ctypes.addressof(definition), self, None)


def builtins(specs: Sequence[tuple[str, bytes, int, Any]]) -> list[Callable]:
    """Builtin functions over machine code: one per (name, code, METH_* flag, self object),
    all in one executable page.  Raises OSError or ValueError where that cannot be done."""
    definitions = _method_definitions([spec[:3] for spec in specs])
    return [_function(d, spec[3]) for d, spec in zip(definitions, specs)]


def _movabs_rax(address: int) -> bytes:
    return b"\x48\xb8" + address.to_bytes(8, "little")


def _array_data_builtin() -> Callable[[Any], int]:
    """data_pointer(array) -> int: a NumPy array's buffer address (PyArrayObject's `data`,
    the field after the object header), made an int by a tail call of PyLong_FromVoidPtr:

        movq   16(%rsi), %rdi     # arg->data
        movabs $PyLong_FromVoidPtr, %rax
        jmp    *%rax
    """
    code = bytes.fromhex("488b7e10") + _movabs_rax(c_address("PyLong_FromVoidPtr")) + \
        bytes.fromhex("ffe0")
    return builtins([("data_pointer", code, METH_O, None)])[0]


def array_kernel(name: str, address: int) -> Callable[[Any, Any], Any]:
    """kernel(x, out) -> out: a builtin calling the native `void fn(const void *x, void *out,
    int64_t n)` at `address` on two ndarrays' buffers, n being out's element count (the
    product of its `dimensions`, read from the PyArrayObject as data_pointer reads `data`).
    A ctypes call of fn costs ~0.6 µs; this ~0.1.  It holds the GIL (for small arrays, where
    the call costs more than the work) and checks nothing: x and out must be C-contiguous
    ndarrays of fn's element types, x at least as long as out.  (METH_FASTCALL: args in rsi.)

        pushq  %rbx                # (also aligns the stack for the call)
        movq   (%rsi), %rax        # x = args[0]
        movq   8(%rsi), %rbx       # out = args[1], kept for the return
        movq   16(%rax), %rdi      # x->data
        movq   16(%rbx), %rsi      # out->data
        movslq 24(%rbx), %rcx      # out->nd
        movq   32(%rbx), %r8       # out->dimensions
        movl   $1, %edx            # n = 1
        testq  %rcx, %rcx
        je     2f
    1:  imulq  (%r8), %rdx         # n *= out->dimensions[i]
        addq   $8, %r8
        decq   %rcx
        jne    1b
    2:  movabs $fn, %rax
        callq  *%rax
        movq   %rbx, %rax
        incq   (%rax)              # Py_INCREF(out)
        popq   %rbx
        retq
    """
    code = (bytes.fromhex("53488b06488b5e08488b7810488b731048634b184c8b4320ba01000000"
                          "4885c9740d490faf104983c00848ffc975f3")
            + _movabs_rax(address) + bytes.fromhex("ffd04889d848ff005bc3"))
    return builtins([(name, code, METH_FASTCALL, None)])[0]


#: the method definition every kernel caller shares (made on first use)
_caller: list = []


def kernel_caller(params: Any) -> Callable[..., Any]:
    """call(*arrays) -> arrays[-1]: a builtin calling the native `void fn(int64_t rows,
    int64_t cols, void **pointers)` with the arrays' buffers as `pointers`, where `params`
    is a C-contiguous int64 ndarray [fn's address, rows, cols] (kept alive by the builtin,
    whose `self` it is).  The GIL is released around fn, as ctypes does, for a fraction of
    what the ctypes pointer array and call cost.  It checks nothing: at least one argument,
    every one an ndarray fn may read or write.  Raises OSError or ValueError where it
    cannot be made.  (METH_FASTCALL: self in rdi, args in rsi, nargs in rdx.)

        pushq  %rbp; movq %rsp, %rbp
        pushq  %rbx; pushq %r12; pushq %r13; pushq %r14
        movq   16(%rdi), %rbx          # params->data: fn, rows, cols
        leaq   15(,%rdx,8), %rax       # room for the pointers, the stack kept aligned
        andq   $-16, %rax
        subq   %rax, %rsp
        xorl   %ecx, %ecx
    1:  cmpq   %rdx, %rcx              # pointers[i] = args[i]->data
        jge    2f
        movq   (%rsi,%rcx,8), %rax
        movq   16(%rax), %rax
        movq   %rax, (%rsp,%rcx,8)
        incq   %rcx
        jmp    1b
    2:  movq   -8(%rsi,%rdx,8), %r14   # the result: the last argument
        movq   %rsp, %r12
        movabs $PyEval_SaveThread, %rax
        callq  *%rax
        movq   %rax, %r13              # the thread state
        movq   8(%rbx), %rdi           # fn(rows, cols, pointers)
        movq   16(%rbx), %rsi
        movq   %r12, %rdx
        movq   (%rbx), %rax
        callq  *%rax
        movq   %r13, %rdi
        movabs $PyEval_RestoreThread, %rax
        callq  *%rax
        movq   %r14, %rax
        incq   (%rax)                  # Py_INCREF(result)
        leaq   -32(%rbp), %rsp
        popq   %r14; popq %r13; popq %r12; popq %rbx; popq %rbp
        retq
    """
    if not _caller:
        code = (bytes.fromhex("554889e553415441554156488b5f10488d04d50f0000004883e0f04829c4"
                              "31c94839d17d11488b04ce488b4010488904cc48ffc1ebea4c8b74d6f8"
                              "4989e4")
                + _movabs_rax(c_address("PyEval_SaveThread"))
                + bytes.fromhex("ffd04989c5488b7b08488b73104c89e2488b03ffd04c89ef")
                + _movabs_rax(c_address("PyEval_RestoreThread"))
                + bytes.fromhex("ffd04c89f048ff00488d65e0415e415d415c5b5dc3"))
        _caller.extend(_method_definitions([("kernel_call", code, METH_FASTCALL)]))
    return _function(_caller[0], params)


def code_address(code: bytes) -> int:
    """The address of machine code `code` (a function of the System V ABI) copied into an
    executable page of its own, kept alive with the process.  Raises OSError or ValueError
    where that cannot be done."""
    import ctypes
    import mmap

    if UNAVAILABLE is not None:
        raise OSError(UNAVAILABLE)
    size = (len(code) + mmap.PAGESIZE - 1) // mmap.PAGESIZE * mmap.PAGESIZE
    page = mmap.mmap(-1, size, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page[:len(code)] = code
    _keep.append(page)
    return ctypes.addressof(ctypes.c_char.from_buffer(page))


def _portable_data_pointer(array: Any) -> int:
    return array.__array_interface__["data"][0]


#: data_pointer(array) -> the address of an ndarray's first element (ndarrays only)
try:
    data_pointer: Callable[[Any], int] = _array_data_builtin()
except (OSError, ValueError, AttributeError):  # no executable memory, another platform
    data_pointer = _portable_data_pointer
