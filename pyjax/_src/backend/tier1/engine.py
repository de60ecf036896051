"""llvmlite underneath tier 1: the host target, libmvec, optimisation and MCJIT, and the one
background thread that compiles kernels while tier 0 serves.

Everything llvmlite does happens under one lock (its global context is not thread-safe);
llvmlite releases the GIL while it optimises and generates code, so Python goes on meanwhile.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import queue
import threading
from typing import Any, Callable

from pyjax._src.backend.tier1.codegen import Isa

#: the kernel's C signature: void kernel(int64 rows, int64 cols, void **pointers)
KERNEL_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)

_lock = threading.Lock()
_target: Any = None            # (llvmlite binding module, target machine, Isa), once set up
_unavailable: str | None = None


def _setup() -> Any:
    """Initialise llvmlite for the host once; the reason tier 1 is off, or None."""
    global _target, _unavailable
    if _target is not None or _unavailable is not None:
        return _unavailable
    try:
        import llvmlite.binding as llvm
    except ImportError:
        _unavailable = "llvmlite is not installed"
        return _unavailable
    path = ctypes.util.find_library("mvec") or "libmvec.so.1"
    try:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        llvm.load_library_permanently(path)
    except OSError as e:
        _unavailable = f"glibc's libmvec could not be loaded ({e})"
        return _unavailable
    features = llvm.get_host_cpu_features()
    if features.get("avx512f"):
        isa = Isa(16, "_ZGVe")
    elif features.get("avx2") and features.get("fma"):
        isa = Isa(8, "_ZGVd")
    else:
        isa = Isa(4, "_ZGVb")
    machine = llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=features.flatten(), opt=2,
        codemodel="jitdefault")
    # one pass builder and one MCJIT engine for the process: the engine owns the target
    # machine, and kernels are added to it as modules (their code lives as long as pyjax)
    tuning = llvm.create_pipeline_tuning_options(speed_level=2)
    builder = llvm.create_pass_builder(machine, tuning)
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
    _target = (llvm, engine, isa, builder, tuning)
    return None


def unavailable() -> str | None:
    """Why native kernels cannot be built here (None when they can)."""
    with _lock:
        return _setup()


def isa() -> Isa:
    with _lock:
        _setup()
        return _target[2]


_count = 0
#: module text -> its compiled kernel: the IR leaves the shape to the call (rows, columns), so
#: one chain of operations over one set of dtypes and broadcasts compiles once per process
_compiled: dict[str, Callable] = {}


def compile_ir(ir: str) -> Callable:
    """The ctypes function of `kernel` in module text `ir`."""
    global _count
    with _lock:
        if ir in _compiled:
            return _compiled[ir]
        _setup()
        llvm, engine, _, builder, _ = _target
        _count += 1
        name = f"kernel{_count}"
        module = llvm.parse_assembly(ir.replace("@kernel(", f"@{name}("))
        module.verify()
        for f in module.functions:  # MCJIT aborts the process on a symbol it cannot resolve
            if (f.is_declaration and not f.name.startswith("llvm.")
                    and not llvm.address_of_symbol(f.name)):
                raise RuntimeError(f"{f.name} is not in this glibc's libmvec")
        builder.getModulePassManager().run(module, builder)
        engine.add_module(module)
        engine.finalize_object()
        _compiled[ir] = KERNEL_TYPE(engine.get_function_address(name))
        return _compiled[ir]


_jobs: "queue.Queue[Callable[[], None]]" = queue.Queue()
_worker: threading.Thread | None = None


def _work() -> None:
    while True:
        job = _jobs.get()
        try:
            job()
        finally:
            _jobs.task_done()


def submit(job: Callable[[], None]) -> None:
    """Run `job` on the background compile thread."""
    global _worker
    with _lock:
        if _worker is None:
            _worker = threading.Thread(target=_work, name="pyjax-compile", daemon=True)
            _worker.start()
    _jobs.put(job)


def wait() -> None:
    """Block until every submitted compile has finished."""
    _jobs.join()
