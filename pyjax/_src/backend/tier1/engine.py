"""llvmlite underneath tier 1: the host target, libmvec, optimisation and MCJIT, the on-disk
cache of object code (disk_cache.py), and the background thread that compiles kernels while
tier 0 serves.

A kernel is parsed, optimised and turned into object code (llvmlite releases the GIL inside
LLVM, so Python goes on meanwhile), then loaded into the one MCJIT engine under the lock.  A
jit cluster's kernel may first be quick code (`compile_quick`: LLVM's fast code generation
after the same IR passes), replaced by the optimised code later (`compile_ir`).
llvmlite runs every LLVM call under a lock of its own, so one compile thread is all there is
to have; and since each LLVM call must take the GIL back from a busy Python thread (up to the
5 ms switch interval each), a compile makes few of them.
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import hashlib
import os
import queue
import re
import threading
import time
from typing import Any, Callable, Iterator

from pyjax._src.backend import fp_mode
from pyjax._src.backend.tier1 import codegen, disk_cache
from pyjax._src.backend.tier1.codegen import Isa
from pyjax._src.primitives import _blas_threads

#: the kernel's C signature: void kernel(int64 rows, int64 cols, void **pointers)
KERNEL_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)

#: the optimisation level and code model every kernel ends with (part of the disk key):
#: large, as MCJIT's own default on x86-64, since the object code is loaded anywhere
_OPT, _CODE_MODEL = 2, "large"
#: the code generation level of a jit cluster's quick code (`compile_quick`), which serves until
#: the same IR compiled at _OPT replaces it: LLVM's fast instruction selection and register
#: allocation, few machine passes (no strength reduction, scheduling, machine CSE or LICM).
#: Kernels are vector IR, which FastISel hands to SelectionDAG anyway: the saving is the
#: passes after it (LLVM 22 with assertions, CPU of emit_object at codegen opt 0 / 1 / 2:
#: softmax's kernel 22 / 57 / 62 ms, layernorm's 22 / 59 / 62, Σtanh² 15 / 28 / 33, selu 6 /
#: 15 / 16; opt 1 saves nothing, nor do -fast-isel or -regalloc=fast at opt 2); the code
#: runs 1.2-2.3x slower
QUICK_OPT = 0
#: LLVM's loop transformations left out of the library kernels' O2 (jit clusters' kernels,
#: written vectorised by codegen, get the short pipeline below): unrolling and interleaving.
#: The library's loops are scalar (threefry's rounds, XLA's polynomials), so LLVM's loop
#: vectorizer stays on: it made threefry2x32 over 5M counter pairs 181 -> 57 ms (exact:
#: integer lanes; float lanes are not reassociated)
_PASSES_OFF = ("loop_unrolling", "loop_interleaving")

_lock = threading.Lock()
#: (llvmlite.binding, MCJIT engine, Isa, target machine options, host description), once set up
_target: Any = None
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
    parallel = _load_gomp(llvm)
    if features.get("avx512f"):
        isa = Isa(16, "_ZGVe", parallel)
    elif features.get("avx2") and features.get("fma"):
        isa = Isa(8, "_ZGVd", parallel)
    else:
        isa = Isa(4, "_ZGVb", parallel)
    target = llvm.Target.from_default_triple()
    cpu = llvm.get_host_cpu_name()
    options = dict(cpu=cpu, features=features.flatten(), opt=_OPT, codemodel=_CODE_MODEL)
    # one MCJIT engine for the process: kernels' object code is loaded into it (and lives as
    # long as pyjax)
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""),
                                        target.create_target_machine(**options))
    _target = (llvm, engine, isa, options, _host(llvm, target.triple, cpu, features))
    return None


#: what every parallel kernel reads on each call (codegen._parallel_ir): the most threads it
#: splits over, the fewest elements worth a thread of their own (large: libgomp's join
#: waits for a worker the OS has not run, ~16 ms on a loaded machine, so only big kernels
#: split), and the most elements a kernel may have and still run on one thread (`gate`)
_controls = (ctypes.c_int64 * 3)(1, 1 << 18, 0)
#: mid-size kernels (more than one grain, at most MID_GRAINS) run on one thread while other
#: processes left this one no second core of late: a second thread then only adds libgomp's join, which waits for a worker
#: the OS has not run (a local psum of 1 MB, a kernel of 2^20 elements, took 112 us on one
#: thread, 611 on two, load ~2); larger kernels gain enough from it to split regardless
MID_GRAINS = 4
#: whether mid-size kernels are gated (not when PYJAX_KERNEL_THREADS or PYJAX_KERNEL_GRAIN,
#: the test switches, pin the split)
gated = True
#: why kernels run on one thread only, or None
serial_reason: str | None = None


#: how long (in pause instructions) an idle libgomp worker spins before it sleeps.  libgomp's
#: default, 300000 (several ms), makes a worker left spinning after one kernel compete for the
#: cores with OpenBLAS's threads and the next kernel's: on 2 cores the attention block's
#: forward took 23 ms instead of 12, its grad 56 instead of 30 (bench/compiler.py workloads)
GOMP_SPIN_COUNT = 10000


@contextlib.contextmanager
def _spin_count(count: int) -> Iterator[None]:
    """libgomp reads its spin count from the environment when it is loaded: set GOMP_SPINCOUNT
    for that moment only, unless the user chose a wait policy (or libgomp is loaded already,
    when it changes nothing)."""
    if "GOMP_SPINCOUNT" in os.environ or "OMP_WAIT_POLICY" in os.environ:
        yield
        return
    os.environ["GOMP_SPINCOUNT"] = str(count)
    try:
        yield
    finally:
        del os.environ["GOMP_SPINCOUNT"]


def _load_gomp(llvm: Any) -> bool:
    """Load libgomp (GOMP_parallel starts kernels' threads) and give the kernels the thread
    controls; False, with `serial_reason` set, when it is missing."""
    global serial_reason, gated
    path = ctypes.util.find_library("gomp") or "libgomp.so.1"
    try:
        with _spin_count(GOMP_SPIN_COUNT):
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        llvm.load_library_permanently(path)
    except OSError as e:
        serial_reason = f"libgomp could not be loaded ({e})"
        return False
    address = ctypes.addressof(_controls)
    llvm.add_symbol("pyjax_kernel_threads", address)
    llvm.add_symbol("pyjax_kernel_grain", address + 8)
    llvm.add_symbol("pyjax_kernel_alone", address + 16)
    # PYJAX_KERNEL_THREADS and PYJAX_KERNEL_GRAIN (test switches) override the defaults
    given = [int(os.environ.get(name, 0)) for name in ("PYJAX_KERNEL_THREADS",
                                                       "PYJAX_KERNEL_GRAIN")]
    gated = not any(given)
    set_threads(given[0] or len(os.sched_getaffinity(0)), given[1] or None)
    return True


def set_threads(threads: int, grain: int | None = None) -> None:
    """Let kernels split over at most `threads` threads, `grain` elements each at least."""
    _controls[0] = max(1, threads)
    if grain is not None:
        _controls[1] = max(1, grain)


def threads() -> tuple[int, int]:
    """(most threads, fewest elements per thread) of a kernel call."""
    return _controls[0], _controls[1]


def mid_size(elements: int) -> bool:
    """Whether a kernel of this many elements is gated (`gate` before each call): more than
    one grain, at most MID_GRAINS (by the grain set now)."""
    grain = _controls[1]
    return gated and grain < elements <= MID_GRAINS * grain


def gate() -> None:
    """Before a mid-size kernel's call: such kernels run on one thread unless other processes
    left this one 1.5 cores over the last window (`_blas_threads._left`: /proc/stat's idle
    time plus this process's own CPU time, read at most once per 0.1 s window, the answer
    kept in between; the same sampler decides BLAS helpers), so that its second thread has a
    core of its own and its own kernels and products, which kept both cores busy, do not
    hold the next one to one thread.  Larger kernels are never held to one thread; which
    thread runs a chunk never changes its bits."""
    _controls[2] = 0 if _blas_threads._left() else MID_GRAINS * _controls[1]


# libgomp's thread pool does not survive fork: a forked child runs kernels on one thread
os.register_at_fork(after_in_child=lambda: set_threads(1))


_tools = threading.local()
#: a declared function's name in module text
_DECLARED = re.compile(r"^declare [^@]*@([\w.$]+)\(", re.MULTILINE)


def _short_pipeline(llvm: Any) -> Any:
    """The passes a cluster kernel gets: codegen already writes it vectorised in SSA with its
    invariants hoisted, so folding, CFG clean-up and redundancy removal are all O2 still gave
    it (measured on selu, sin, Σtanh², softmax and layernorm kernels: the same steady speed,
    object code 2-4% larger, 3-6 ms of CPU instead of O2's 10-25 per kernel)."""
    pm = llvm.create_new_module_pass_manager()
    pm.add_instruction_combine_pass()
    pm.add_simplify_cfg_pass()
    pm.add_new_gvn_pass()
    pm.add_instruction_combine_pass()
    pm.add_aggressive_dce_pass()
    return pm


def _object_code(ir: str, short: bool = False, opt: int = _OPT) -> bytes:
    """Module text `ir` verified, optimised (O2, or `short`: _short_pipeline) and compiled to
    object code at code generation level `opt` with this thread's own LLVM context, target
    machines and pass builder."""
    llvm = _target[0]
    if not hasattr(_tools, "machines"):
        _tools.context = llvm.create_context()
        _tools.machines = {_OPT: _machine(llvm, _OPT)}
        tuning = llvm.create_pipeline_tuning_options(speed_level=_OPT)
        for name in _PASSES_OFF:
            setattr(tuning, name, False)
        _tools.builder = llvm.create_pass_builder(_tools.machines[_OPT], tuning)
        _tools.short = _short_pipeline(llvm)
    if opt not in _tools.machines:
        _tools.machines[opt] = _machine(llvm, opt)
    for name in _DECLARED.findall(ir):  # MCJIT aborts the process on a symbol it cannot
        if not name.startswith("llvm.") and not llvm.address_of_symbol(name):  # resolve
            raise RuntimeError(f"{name} is not in this glibc's libmvec")
    module = llvm.parse_assembly(ir, context=_tools.context)
    module.verify()
    passes = _tools.short if short else _tools.builder.getModulePassManager()
    passes.run(module, _tools.builder)
    return _tools.machines[opt].emit_object(module)


def _machine(llvm: Any, opt: int) -> Any:
    """A target machine for the host generating code at level `opt`."""
    return llvm.Target.from_default_triple().create_target_machine(**{**_target[3], "opt": opt})


def _host(llvm: Any, triple: str, cpu: str, features: Any) -> str:
    """Everything besides the IR that shapes a kernel's machine code: part of its disk key."""
    import llvmlite

    import pyjax
    return "\n".join((
        triple, cpu, features.flatten(), f"llvmlite {llvmlite.__version__}",
        "LLVM " + ".".join(map(str, llvm.llvm_version_info)), f"pyjax {pyjax.__version__}",
        f"opt {_OPT}, code model {_CODE_MODEL}, off: {' '.join(_PASSES_OFF)}",
        "runtime " + hashlib.sha256(codegen.runtime_ir().encode()).hexdigest()[:16]))


def unavailable() -> str | None:
    """Why native kernels cannot be built here (None when they can).  Once known it is read
    without the lock: eager calls ask on every call, and a thread looping over them would
    otherwise take the lock back each time before a compile thread waiting for it could
    (a threefry kernel waited 13-30 s behind a loop of random.normal calls)."""
    if _target is not None or _unavailable is not None:
        return _unavailable
    with _lock:
        return _setup()


def isa() -> Isa:
    if _target is None:
        with _lock:
            _setup()
    return _target[2]


#: modules (kernels and the shared functions they call) compiled from IR (at _OPT), those
#: loaded from the disk cache, and the kernels compiled as quick code, in this process
_counts = {"compiled": 0, "loaded": 0, "quick": 0}
#: module text -> its compiled kernel: the IR leaves the shape to the call (rows, columns), so
#: one chain of operations over one set of dtypes and broadcasts compiles once per process
_compiled: dict[str, Callable] = {}
#: the module texts whose kernel in _compiled is quick code (QUICK_OPT), not yet replaced
_quick: set[str] = set()


def counts() -> dict[str, int]:
    """How many modules this process compiled (optimised), loaded from the disk cache, and
    compiled as quick code."""
    with _lock:
        return dict(_counts)


def compile_ir(ir: str, short: bool = False) -> Callable:
    """The ctypes function of `kernel` in module text `ir`: from the disk cache when it holds a
    good entry for it, else optimised (`short`: a jit cluster's short pipeline) and compiled
    (and written to the cache).  LLVM folds constants with the host's libm, so it runs with
    subnormals kept (fp_mode), even when called from inside an eager operation.  Quick code
    this process compiled for `ir` (compile_quick) is replaced by it."""
    return fp_mode.run_unflushed(_compile_ir, ir, short, False)[0]


def compile_quick(ir: str, short: bool = False) -> tuple[Callable, bool]:
    """(the ctypes function of `kernel` in module text `ir`, whether it is the optimised code)
    soonest: the optimised code when this process or the disk cache has it, else quick code,
    compiled at code generation level QUICK_OPT after the same IR passes (the same arithmetic,
    so the same bits, only slower: compile_ir(ir) later compiles the optimised code; quick
    code is never written to the disk cache)."""
    return fp_mode.run_unflushed(_compile_ir, ir, short, True)


def _compile_ir(ir: str, short: bool, quick: bool) -> tuple[Callable, bool]:
    with _lock:
        if ir in _compiled and (quick or ir not in _quick):
            return _compiled[ir], ir not in _quick
        _setup()
        upgrade = ir in _quick  # (the disk cache was asked when the quick code was compiled)
    for name in _DECLARED.findall(ir):
        if name in _SHARED:
            _load_shared(name)
    key = disk_cache.key(ir, _target[4] + ("\nshort passes" if short else ""))
    # a name fixed by the key: the cached object code defines the symbol it was built with
    # (quick code another: MCJIT finds a symbol by its name among all the objects loaded)
    name = f"kernel_{key[:24]}"
    code, cached = _code(key, lambda: ir.replace("@kernel(", f"@{name}{'_quick' * quick}("),
                         short, quick=quick, look=not upgrade)
    quick = quick and not cached
    name += "_quick" * quick
    with _lock:
        # (unless another thread loaded the same kernel, or its optimised code, meanwhile)
        if ir not in _compiled or ir in _quick and not quick:
            _compiled[ir] = KERNEL_TYPE(*_add_object(code, name))
            _counts["loaded" if cached else "quick" if quick else "compiled"] += 1
            (_quick.add if quick else _quick.discard)(ir)
        kernel, optimised, first = _compiled[ir], ir not in _quick, len(_compiled) == 1
    if first:  # the shared functions many later kernels call, compiled in the background
        for shared in _PRELOADED:  # now rather than by one of them (after the first kernel,
            submit(functools.partial(_load_shared, shared))  # not to delay its compile)
    return kernel, optimised


def _code(key: str, ir: Callable[[], str], short: bool, quick: bool = False,
          look: bool = True) -> tuple[bytes, bool]:
    """(object code of module text `ir()`, whether it came from the disk cache): the cached
    entry for `key` (unless not `look`), else compiled and written to the cache, or, `quick`,
    compiled as quick code and not written."""
    start = time.perf_counter()
    cached = disk_cache.load(key) if look else None
    if cached is not None:
        return cached, True
    if quick:
        return _object_code(ir(), short, QUICK_OPT), False
    code = _object_code(ir(), short)
    disk_cache.store(key, code, time.perf_counter() - start)
    return code, False


def _add_object(code: bytes, *symbols: str) -> list[int]:
    """Load object code into the engine (under _lock); the addresses of its `symbols`."""
    llvm, engine = _target[0], _target[1]
    engine.add_object_file(llvm.ObjectFileRef.from_data(code))
    engine.finalize_object()
    return [engine.get_function_address(symbol) for symbol in symbols]


#: functions kernels call without defining them (codegen.shared_functions: the parallel
#: runtime, a row's pairwise sum), each module compiled once per process when a kernel first
#: declares one of its functions; and the symbols loaded so far
_SHARED = codegen.shared_functions()
_shared_loaded: set[str] = set()
_shared_lock = threading.Lock()
#: the shared functions compiled in the background once the process's first kernel is
#: (float32's pairwise row sum: ~40 ms of CPU)
_PRELOADED = (codegen.pairwise_name(codegen.F32),)


def _load_shared(name: str) -> None:
    """Make shared function `name` (and the others of its module) callable from the modules
    compiled after this (a second thread asking meanwhile waits for the first's compile)."""
    with _shared_lock:
        if name in _shared_loaded:
            return
        ir = _SHARED[name]()
        code, cached = _code(disk_cache.key(ir, _target[4] + "\nshort passes"), lambda: ir, True)
        names = [other for other, maker in _SHARED.items() if maker == _SHARED[name]]
        with _lock:
            _counts["loaded" if cached else "compiled"] += 1
            for symbol, address in zip(names, _add_object(code, *names)):
                _target[0].add_symbol(symbol, address)
        _shared_loaded.update(names)


_jobs: "queue.Queue[Callable[[], None]]" = queue.Queue()
_worker: threading.Thread | None = None
#: held by the compile thread through each job, and by a thread that forks (see _forking)
_busy = threading.Lock()


def _work(jobs: "queue.Queue[Callable[[], None]]") -> None:
    """The compile thread: runs the jobs of `jobs`, the queue it was started for, marking each
    done there.  (Another queue may take `_jobs`' place meanwhile: a test's, while this thread
    is inside a job.  Marked done on the new one, the job made its count go wrong: "task_done()
    called too many times" on a compile thread, and a wait() on the old one hung.)"""
    fp_mode.flush_off()  # started inside an eager operation, the thread inherited its flushing
    while True:
        job = jobs.get()
        try:
            with _busy:
                job()
        finally:
            jobs.task_done()


def submit(job: Callable[[], None]) -> None:
    """Run `job` on the background compile thread (started on first use)."""
    global _worker
    with _lock:
        if _worker is None:
            _worker = threading.Thread(target=_work, args=(_jobs,), name="pyjax-compile",
                                       daemon=True)
            _worker.start()
    _jobs.put(job)


#: calls served the slow way (NumPy) while their kernel compiles, before the next one waits
#: for the compile instead: a Python thread that keeps calling such an operation keeps taking
#: the GIL back from the compile thread between its LLVM calls, and starved a threefry compile
#: of ~40 ms for 13-30 s behind a loop of eager random.normal calls (400 us each instead of 4)
PATIENCE = 32
#: the longest such a call waits (a compile stuck elsewhere leaves it on the slow way)
PATIENCE_TIMEOUT_S = 10.0


class Patience:
    """The slow calls made while one compile is pending: past `limit`, `slow_call()` waits
    for `done` (set when the compile ends, whichever way) before the caller goes on."""

    __slots__ = ("done", "calls", "limit")

    def __init__(self, limit: int = PATIENCE) -> None:
        self.done = threading.Event()
        self.calls = 0
        self.limit = limit  # (0: the first call waits)

    def slow_call(self) -> None:
        self.calls += 1
        if self.calls > self.limit and threading.current_thread() is not _worker:
            self.done.wait(PATIENCE_TIMEOUT_S)


def _forking() -> None:
    """Before a fork: wait for the compile thread's job in progress.  A child gets the locks
    as they were, held by threads it does not have: llvmlite's, held through every LLVM call,
    would hang the child's first compile (and quick code makes a job likely: each kernel's
    optimised code compiles once it is called again)."""
    _busy.acquire()


def _forget_worker() -> None:
    """In a forked child: the compile thread is gone; a new one starts on the next submit."""
    global _jobs, _worker
    _worker, _jobs = None, queue.Queue()
    _busy.release()


os.register_at_fork(before=_forking, after_in_parent=_busy.release,
                    after_in_child=_forget_worker)


def wait() -> None:
    """Block until every submitted compile has finished (at once on the compile thread)."""
    if threading.current_thread() is not _worker:
        _jobs.join()
