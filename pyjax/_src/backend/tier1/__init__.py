"""Tier 1: native kernels for fused clusters, compiled by llvmlite for the host CPU.

`attach(program)` looks at each cluster tier 0 generated a function for; those that codegen
supports are compiled on the background thread (or at once under `jax_compile_sync`) and then
replace tier 0's function in the generated module's globals, so the next call of `run` uses
the native kernel.  Without llvmlite or libmvec tier 1 is off; `reason()` says why.
"""
from __future__ import annotations

import ctypes
import math
import os
import warnings
import weakref
from typing import Any, Callable

import numpy as np

from pyjax._src.backend import host_memory, machine_code
from pyjax._src.backend.machine_code import data_pointer
from pyjax._src.backend.tier1 import codegen, engine
from pyjax._src.backend.tier1.codegen import Unsupported

_SWITCH = os.environ.get("PYJAX_TIER1", "on").strip().lower()
#: PYJAX_TIER1=off turns native kernels off (a test switch)
ENABLED = _SWITCH != "off"
#: PYJAX_TIER1=force (a test switch) compiles every cluster at once, so the native kernel is
#: what runs from the first call; tier0.BLOCKWISE_MIN gives every cluster a function under it
FORCED = _SWITCH == "force"

_warned = False


def reason() -> str | None:
    """Why tier 1 does not run here, or None when it does."""
    if not ENABLED:
        return "tier 1 is turned off (PYJAX_TIER1=off)"
    return engine.unavailable()


class Kernel:
    """A compiled cluster, callable exactly like tier 0's function for it."""

    def __init__(self, cluster: Any, layout: codegen.Layout, ir: str) -> None:
        self.ir = ir
        self.layout = layout
        shape = cluster.shape
        self.rows = math.prod(shape[:layout.split])
        self.cols = math.prod(shape[layout.split:])
        self.inputs = [(i, np.dtype(cluster.inputs[i].aval.dtype)) for i, _ in layout.inputs]
        self.outputs = [(tuple(v.aval.shape), np.dtype(v.aval.dtype), _align(streamed))
                        for v, streamed in zip(layout.outputs, layout.streamed)]
        self.fn: Any = None
        self.fallback: Any = None  # tier 0's function for the cluster

    @property
    def fn(self) -> Any:
        """The native function: fn(rows, cols, pointers)."""
        return self._fn

    @fn.setter
    def fn(self, fn: Any) -> None:
        self._fn = fn
        #: call(*arrays): fn on this kernel's rows and columns and the arrays' buffers
        self.call = None if fn is None else _caller(fn, self.rows, self.cols)

    def compile(self, quick: bool = False) -> None:
        """Compile the kernel; `quick`: quick code first where the optimised code is not at
        hand (engine.compile_quick: the same bits), replaced by the optimised code, compiled
        on the compile thread from the kernel's second call on (or when wait() asks): not
        during the first call, whose other work it would slow (llvmlite runs one LLVM call at
        a time, and the cores are shared; scatter-add's first call took 8 ms longer), nor for
        a function called once."""
        if not quick:
            self.fn = engine.compile_ir(self.ir, short=True)
            return
        fn, optimised = engine.compile_quick(self.ir, short=True)
        if optimised:
            self.fn = fn
            return

        def first(*args: Any) -> None:
            fn(*args)
            self.fn = again
            _ran_once.add(self)

        def again(*args: Any) -> None:
            self.fn = fn
            _ran_once.discard(self)
            engine.submit(self._optimise)
            fn(*args)
        self.fn = first

    def _optimise(self) -> None:
        """Swap the optimised code in for the quick code."""
        try:
            self.fn = engine.compile_ir(self.ir, short=True)
        except Exception:  # noqa: BLE001  (LLVM rejected it: the quick code keeps serving)
            pass

    def __call__(self, *args: Any) -> tuple:
        keep = []
        for i, dtype in self.inputs:
            x = np.asarray(args[i])
            if not x.flags.c_contiguous or x.dtype != dtype:  # a broadcast or strided view:
                return self.fallback(*args)  # tier 0 reads it without copying
            keep.append(x)
        outs = [_output(shape, dtype, align) for shape, dtype, align in self.outputs]
        self.call(*keep, *outs)
        return tuple(outs)


class GroupKernel(Kernel):
    """A row group's kernel (codegen.group_ir), callable exactly like tier 0's function for
    the group: its inputs in, its outputs out.  The values its members pass each other live
    on the kernel's stack, or get buffers of their own like the outputs."""

    def __init__(self, group: Any, members: list, ir: str, layouts: list, stack: set) -> None:
        self.ir = ir
        self.rows = math.prod(group.rows)
        self.cols = max(math.prod(m.shape[len(group.rows):]) for m in members)
        self.buffers: list[tuple] = []  # (shape, dtype, align) of member outputs off the stack
        made: dict[Any, int] = {}  # member output -> its buffer
        # per pointer: (a group input?, index), or None for a value on the stack
        self.sources: list[tuple[bool, int] | None] = []
        for member, layout in zip(members, layouts):
            for i, _ in layout.inputs:
                a = member.inputs[i]
                self.sources.append(None if a in stack else (False, made[a]) if a in made
                                    else (True, group.inputs.index(a)))
            for v in layout.outputs:
                if v not in stack:
                    made[v] = len(self.buffers)
                    self.buffers.append((tuple(v.aval.shape), np.dtype(v.aval.dtype),
                                         _align(layout.streamed[layout.outputs.index(v)])))
                self.sources.append(None if v in stack else (False, made[v]))
        self.inputs = sorted({(s[1], np.dtype(group.inputs[s[1]].aval.dtype))
                              for s in self.sources if s is not None and s[0]})
        self.results = [made[v] for v in group.outputs]
        self.fn = None
        self.fallback = None

    def __call__(self, *args: Any) -> tuple:
        keep = {}
        for i, dtype in self.inputs:
            x = np.asarray(args[i])
            if not x.flags.c_contiguous or x.dtype != dtype:  # a broadcast or strided view:
                return self.fallback(*args)  # tier 0 reads it without copying
            keep[i] = x
        made = [_output(shape, dtype, align) for shape, dtype, align in self.buffers]
        self.call(*[_ON_STACK if s is None else keep[s[1]] if s[0] else made[s[1]]
                    for s in self.sources])
        return tuple(made[j] for j in self.results)


#: what a row group's kernel is passed for a value its members keep on its stack (ignored)
_ON_STACK = np.empty(0, np.uint8)


def _caller(fn: Any, rows: int, cols: int) -> Callable[..., Any]:
    """call(*arrays): fn(rows, cols, the arrays' buffers) with the GIL released; for a
    mid-size kernel (engine.mid_size), after engine.gate, which keeps it on one thread while
    other processes left this one no second core of late."""
    call = _native_caller(fn, rows, cols)
    if not engine.mid_size(rows * cols):
        return call
    gate = engine.gate

    def gated(*arrays: Any) -> None:
        gate()
        call(*arrays)
    return gated


def _native_caller(fn: Any, rows: int, cols: int) -> Callable[..., Any]:
    """call(*arrays) through machine_code's builtin for a native function, else ctypes (a
    kernel call of psum's 4 x 16384 floats: 6.9 us of Python and ctypes around the kernel
    -> 1.4)."""
    if isinstance(fn, ctypes._CFuncPtr) and machine_code.UNAVAILABLE is None:
        address = ctypes.cast(fn, ctypes.c_void_p).value
        try:
            return machine_code.kernel_caller(np.array([address, rows, cols], np.int64))
        except (OSError, ValueError):  # no executable memory
            pass

    def call(*arrays: Any) -> None:
        fn(rows, cols, (ctypes.c_void_p * len(arrays))(*map(data_pointer, arrays)))
    return call


#: _output(shape, dtype, align): a kernel's output buffer (a large one from host_memory's
#: pool); `align`, codegen.STREAM_ALIGN for one it streams (nontemporal stores), else 0
_output = host_memory.empty


def _align(streamed: bool) -> int:
    """Where an output's buffer must start (0: anywhere)."""
    return codegen.STREAM_ALIGN if streamed else 0


def build_group(group: Any) -> GroupKernel | str:
    """The (not yet compiled) kernel of a row group (fusion.RowGroup), or why there is none
    (its function then runs each member's own kernel)."""
    why = reason()
    if why is not None:
        return why
    members = [m for m in group.steps if m.outputs]  # (a dead member is never run)
    internal = [v for m in members for v in m.outputs if v not in group.outputs]
    try:
        ir, layouts, stack = codegen.group_ir(members, len(group.rows), engine.isa(), internal)
    except Unsupported as e:
        return str(e)
    return GroupKernel(group, members, ir, layouts, stack)


def build(cluster: Any) -> Kernel | str:
    """The (not yet compiled) kernel of `cluster`, or why there is none."""
    why = reason()
    if why is not None:
        return why
    try:
        ir, layout = codegen.kernel_ir(cluster, engine.isa())
    except Unsupported as e:
        return str(e)
    return Kernel(cluster, layout, ir)


def attach(program: Any, sync: bool) -> dict[str, Kernel | str]:
    """Compile tier 1 kernels for `program`'s cluster and row group functions and swap each
    in when ready.  Returns, per function, its kernel or the reason it stays on tier 0 (the
    clusters of a group that has a kernel get none: they only run when it falls back)."""
    global _warned
    kernels: dict[str, Kernel | str] = {}
    work: dict[str, int] = {}  # element-operations per call: tier 0's cost, roughly
    grouped: set = set()  # clusters a group's kernel runs: no kernel of their own to compile
    for fname, group in program.groups.items():
        kernels[fname] = build_group(group)
        work[fname] = sum(_work(m) for m in group.steps)
        if isinstance(kernels[fname], GroupKernel):
            grouped.update(id(m) for m in group.steps)
    for fname, cluster in program.clusters.items():
        if id(cluster) not in grouped:
            kernels[fname] = build(cluster)
            work[fname] = _work(cluster)
    missing = engine.unavailable() if ENABLED else None
    if missing is not None and program.clusters and not _warned:
        _warned = True
        warnings.warn(f"pyjax runs fused kernels on NumPy only: {missing}", RuntimeWarning,
                      stacklevel=2)
    namespace = program.namespace

    def install(fname: str, kernel: Kernel) -> None:
        try:
            kernel.compile(quick=work[fname] < QUICK_WORK)
        except Exception as e:  # noqa: BLE001  (LLVM rejected it: tier 0 keeps serving)
            kernels[fname] = f"LLVM failed: {e}"
            namespace[fname] = kernel.fallback
            return
        namespace[fname] = kernel

    for fname, kernel in kernels.items():
        if isinstance(kernel, Kernel):
            kernel.fallback = namespace[fname]
            if sync or FORCED:
                install(fname, kernel)
            else:  # (a large cluster's first call waits: tier 0 would take longer)
                patience = engine.Patience(0 if work[fname] >= WAIT_WORK else engine.PATIENCE)
                namespace[fname] = _patient(namespace, fname, kernel.fallback, patience)
                engine.submit(lambda f=fname, k=kernel, p=patience: _installed(install, f, k, p))
    return kernels


#: element-operations of a cluster below which its kernel is compiled as quick code first
#: (Kernel.compile): the compile time saved (10-45 ms of CPU a kernel) is worth more than the
#: quick code's slower first call(s): 0.1-0.25 ns more per element-operation (selu, softmax,
#: layernorm, Σtanh²), so sin(10 e^x) cos(x²+1) over 50M elements (400M) compiles optimised
QUICK_WORK = 1 << 27


#: element-operations of a cluster from which its first call waits for its kernel rather than
#: run on tier 0: NumPy takes ~1-10 ns for each (XLA's exact transcendentals are polynomials of
#: many ufunc calls), a kernel's compile ~10-30 ms (sin(10 e^x) cos(x^2+1) of 50M: tier 0
#: 9.2 s, compile and run 0.36 s)
WAIT_WORK = 1 << 22


def _work(cluster: Any) -> int:
    """A cluster's element-operations per call (its size times its equations)."""
    members = getattr(cluster, "members", None)
    return cluster.size * len(members) if members is not None else 0


def _installed(install: Any, fname: str, kernel: Kernel, patience: Any) -> None:
    """install(fname, kernel), then let the calls waiting for it go on."""
    try:
        install(fname, kernel)
    finally:
        patience.done.set()


def _patient(namespace: dict, fname: str, fallback: Any, patience: Any) -> Any:
    """Tier 0's function for a cluster whose kernel is compiling: after engine.PATIENCE
    calls a call waits for the compile, then runs whatever serves the cluster by then."""
    def call(*args: Any) -> tuple:
        patience.slow_call()
        current = namespace[fname]
        return (fallback if current is call else current)(*args)
    return call


#: kernels whose quick code has run once: compiled optimised when called again or by wait()
_ran_once: "weakref.WeakSet[Kernel]" = weakref.WeakSet()


def wait() -> None:
    """Block until every background compile has finished, the optimised code of each kernel
    whose quick code has run included (tests, benchmarks, as_text)."""
    for kernel in list(_ran_once):
        _ran_once.discard(kernel)
        engine.submit(kernel._optimise)
    engine.wait()
