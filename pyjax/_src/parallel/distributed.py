"""jax.distributed on MPI: `initialize()` joins this process to the job that mpirun/srun
started (read from the Open MPI, PMI or Slurm environment), after which the devices of every
process are visible, ordered process by process, and pmap's collectives span processes.

Those collectives first reduce over the local devices, then call the process-level
primitives here (allreduce, allgather, alltoall, permute), which run MPI in program order:
they have effects, so jit neither drops, merges nor reorders them.
"""
from __future__ import annotations

import atexit
import functools
import os
import sys
from typing import Any, Sequence

import numpy as np

from pyjax._src import thread_guard
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.transforms import ad


class _State:
    def __init__(self) -> None:
        self.transport: Any = None
        self.process_index = 0
        self.process_count = 1


state = _State()

#: environment variables giving (process count, process index), by launcher
_LAUNCHERS = (("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"),  # Open MPI
              ("PMI_SIZE", "PMI_RANK"),                          # MPICH (Hydra), Intel MPI
              ("PMIX_SIZE", "PMIX_RANK"),
              ("SLURM_NTASKS", "SLURM_PROCID"))                  # srun


def _detect() -> tuple[int, int] | None:
    for size, rank in _LAUNCHERS:
        if os.environ.get(size) and os.environ.get(rank):
            return int(os.environ[size]), int(os.environ[rank])
    return None


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, local_device_ids: int | Sequence[int] | None = None,
               cluster_detection_method: str | None = None, initialization_timeout: int = 300,
               heartbeat_timeout_seconds: int = 100, shutdown_timeout_seconds: int = 300,
               coordinator_bind_address: str | None = None, slice_index: int | None = None,
               partition_index: int | None = None) -> None:
    """Join the MPI job this process was started in (no arguments needed under mpirun or
    srun).  Collectives that wait longer than `heartbeat_timeout_seconds` for the other
    processes fail (PYJAX_COLLECTIVE_TIMEOUT overrides it)."""
    from pyjax._src.parallel import devices
    if state.transport is not None:
        raise RuntimeError("distributed.initialize should only be called once.")
    if devices.initialized_backends:
        raise RuntimeError("jax.distributed.initialize() must be called before any JAX calls "
                           "that might initialise the XLA backend. This includes any "
                           "computation, but also calls to jax.devices, jax.device_put, and "
                           "others.")
    detected = _detect()
    if detected is None and cluster_detection_method not in (None, "mpi4py"):
        raise ValueError("coordinator_address should be defined.")
    if detected is None and num_processes is None:
        raise ValueError("coordinator_address should be defined.")
    size, rank = detected if detected is not None else (num_processes, process_id)
    num_processes = size if num_processes is None else num_processes
    process_id = rank if process_id is None else process_id
    if process_id is None:
        raise ValueError("The process id of the current process must be defined.")
    if not isinstance(process_id, int):
        raise TypeError("process_id must be a nonnegative int. "
                        f"Got process_id={process_id} of type {type(process_id)}.")
    if not isinstance(num_processes, int):
        raise TypeError("num_processes must be a positive int. "
                        f"Got num_processes={num_processes} of type {type(num_processes)}.")
    if not 0 <= process_id < num_processes:
        raise ValueError("process_id and num_processes must be nonnegative, with process_id < "
                         f"num_processes. Got process_id={process_id}, "
                         f"num_processes={num_processes}.")
    timeout = float(os.environ.get("PYJAX_COLLECTIVE_TIMEOUT", heartbeat_timeout_seconds))
    check = os.environ.get("PYJAX_CHECK_COLLECTIVES", "") not in ("", "0")
    from pyjax._src.parallel.mpi import Transport
    transport = Transport(timeout, check)
    if (transport.size, transport.rank) != (num_processes, process_id):
        transport.close()
        raise ValueError(
            f"jax.distributed.initialize was given num_processes={num_processes} and "
            f"process_id={process_id}, but the MPI job has {transport.size} processes and this "
            f"is process {transport.rank}.")
    state.transport = transport
    state.process_index, state.process_count = transport.rank, transport.size
    devices.set_process_layout(transport.rank, transport.size)
    _share_cores(transport.node_size)
    _install_failure_hook()


def _share_cores(processes: int) -> None:
    """The processes on one machine share its cores: each one's native kernels split over its
    share of them (PYJAX_KERNEL_THREADS, read when the kernels' runtime loads), not over every
    core, unless PYJAX_KERNEL_THREADS says otherwise.  (2 processes x 2 kernel threads on the
    2-core dev machine: a pmap psum of 1 MB took 1.5 ms, with 1 thread each 0.8.)"""
    if os.environ.get("PYJAX_KERNEL_THREADS"):
        return
    threads = max(1, len(os.sched_getaffinity(0)) // max(1, processes))
    os.environ["PYJAX_KERNEL_THREADS"] = str(threads)
    from pyjax._src.backend.tier1 import engine
    engine.set_threads(threads)  # (when the runtime has loaded already)


def is_initialized() -> bool:
    """Whether `initialize` has joined this process to a job."""
    return state.transport is not None


def shutdown() -> None:
    """Leave the job: back to one process (the devices are counted again at next use)."""
    from pyjax._src.parallel import devices
    if state.transport is None:
        return
    state.transport.close()
    state.transport = None
    state.process_index, state.process_count = 0, 1
    devices.set_process_layout(0, 1)


def set_check_collectives(enabled: bool) -> None:
    """Turn the cross-process sequence check on or off (PYJAX_CHECK_COLLECTIVES=1 at start)."""
    if state.transport is not None:
        state.transport.check = bool(enabled)


def notify_failure(error: BaseException) -> None:
    """This process failed: the others' pending and next collectives raise, naming it."""
    from pyjax._src.parallel.mpi import CollectiveError
    if state.transport is not None and not isinstance(error, CollectiveError):
        state.transport.notify_failure(f"{type(error).__name__}: {error}")


def _install_failure_hook() -> None:
    previous = sys.excepthook

    def hook(kind: type, value: BaseException, tb: Any) -> None:
        notify_failure(value)
        previous(kind, value, tb)

    sys.excepthook = hook
    atexit.register(shutdown)


def spans_processes() -> bool:
    return state.process_count > 1


# ---------------------------------------------------------------------------------------------
# Process-level primitives: what crosses between processes, in program order
# ---------------------------------------------------------------------------------------------

def _describe(name: str, x: Any, **params: Any) -> str:
    """What a process-level collective is, for messages and the sequence check (the transport
    asks for it only then)."""
    extra = " ".join(f"{k}={v}" for k, v in sorted(params.items()))
    aval = ShapedArray(np.shape(x), np.asarray(x).dtype if not hasattr(x, "dtype") else x.dtype)
    return f"{name} {aval.str_short()}" + (f" {extra}" if extra else "")


def _reduce_impl(x: np.ndarray, *, op: str, collective: str) -> np.ndarray:
    x = np.asarray(x)
    wide = x if x.dtype.isbuiltin else x.astype(np.float32)
    out = state.transport.allreduce(wide, op, lambda: _describe(collective, x, op=op))
    return out.astype(x.dtype) if out.dtype != x.dtype else out


def _gather_impl(x: np.ndarray, *, collective: str) -> np.ndarray:
    x = np.asarray(x)
    out = state.transport.allgather(x, lambda: _describe(collective, x))
    return out.reshape((-1,) + x.shape[1:])


def _alltoall_impl(x: np.ndarray, *, collective: str) -> np.ndarray:
    x = np.asarray(x)
    return state.transport.alltoall(x, lambda: _describe(collective, x))


def _permute_impl(x: np.ndarray, *, perm: tuple, local: int, collective: str) -> np.ndarray:
    """x: (local members, ...); member (process p, local l) is global member p*local + l.
    Member dst receives member src's row for each (src, dst) in perm; others get zeros."""
    x = np.asarray(x)
    moves, sends, receives, covered = _routes(perm, local, state.process_index)
    out = (np.empty if covered else np.zeros)(x.shape, x.dtype)  # C order: rows are blocks
    for dl, sl in moves:
        out[dl] = x[sl]
    state.transport.permute([(dp, dl, x[sl, ...]) for dp, dl, sl in sends],
                            [(sp, dl, out[dl, ...]) for dl, sp in receives],
                            lambda: _describe(collective, x, perm=perm))
    return out


@functools.lru_cache(maxsize=256)
def _routes(perm: tuple, local: int, me: int) -> tuple[tuple, tuple, tuple, bool]:
    """How process `me` carries out `perm` over members of `local` per process: the rows
    moved within it (dst_local, src_local), those sent (dst_process, dst_local, src_local)
    and received (dst_local, src_process), each in order, and whether every local row
    receives one."""
    moves, sends, receives, filled = [], [], [], set()
    for src, dst in perm:
        sp, sl = divmod(src, local)
        dp, dl = divmod(dst, local)
        if sp == me and dp == me:
            moves.append((dl, sl))
        elif sp == me:
            sends.append((dp, dl, sl))
        elif dp == me:
            receives.append((dl, sp))
        if dp == me:
            filled.add(dl)
    return (tuple(moves), tuple(sorted(sends)), tuple(sorted(receives)),
            len(filled) == local)


def _effectful(name: str, impl: Any, abstract: Any) -> Primitive:
    prim = Primitive(name)

    def guarded(*args: Any, **params: Any) -> Any:
        thread_guard.check()  # jax.thread_guard: only the guarding thread may cross processes
        return impl(*args, **params)
    prim.impl = guarded
    prim.abstract_eval = abstract
    prim.effectful = True
    return prim


def _same(x: ShapedArray, **_: Any) -> ShapedArray:
    return x


def _gathered(x: ShapedArray, **_: Any) -> ShapedArray:
    return ShapedArray((x.shape[0] * state.process_count,) + x.shape[1:], x.dtype,
                       x.weak_type)


process_allreduce_p = _effectful("process_allreduce", _reduce_impl, _same)
process_allgather_p = _effectful("process_allgather", _gather_impl, _gathered)
process_alltoall_p = _effectful("process_alltoall", _alltoall_impl, _same)
process_permute_p = _effectful("process_permute", _permute_impl, _same)

ad.deflinear(process_allreduce_p, lambda ct, x, *, op, collective: [
    process_allreduce_p.bind(ct, op=op, collective=collective)])
ad.deflinear(process_permute_p, lambda ct, x, *, perm, local, collective: [
    process_permute_p.bind(ct, perm=tuple((d, s) for s, d in perm), local=local,
                           collective=collective)])


def allreduce(x: Any, op: str, collective: str) -> Any:
    """x reduced (sum, max or min) over the processes."""
    return process_allreduce_p.bind(x, op=op, collective=collective)


def allgather(x: Any, collective: str) -> Any:
    """Every process's x concatenated along the leading axis, in process order."""
    return process_allgather_p.bind(x, collective=collective)


def alltoall(x: Any, collective: str) -> Any:
    """Block p of x's leading axis (one per process) sent to process p; block q of the
    result came from process q."""
    return process_alltoall_p.bind(x, collective=collective)


def permute(x: Any, perm: tuple, local: int, collective: str) -> Any:
    """ppermute across processes of the local members stacked on x's leading axis."""
    return process_permute_p.bind(x, perm=perm, local=local, collective=collective)


def _allgather_transpose(ct: Any, x: Any, *, collective: str) -> list:
    """Each process's block of the summed cotangent."""
    from pyjax._src.primitives import indexing as idx
    total = process_allreduce_p.bind(ct, op="sum", collective=collective)
    rows = ct.shape[0] // state.process_count
    start = state.process_index * rows
    return [idx.slice_in_dim(total, start, start + rows, axis=0)]


ad.deflinear(process_allgather_p, _allgather_transpose)
ad.deflinear(process_alltoall_p, lambda ct, x, *, collective: [
    process_alltoall_p.bind(ct, collective=collective)])


def _batch_keeping_leading(prim: Primitive, elementwise: bool) -> None:
    """An outer vmap's axis: kept where it is (elementwise), else moved behind the leading
    axis that the primitive exchanges."""
    from pyjax._src.transforms.batching import move_axis

    def rule(vals: list, dims: list, **params: Any) -> tuple:
        (x,), (d,) = vals, dims
        if elementwise:
            return prim.bind(x, **params), d
        return prim.bind(move_axis(x, d, 1), **params), 1

    prim.batch = rule


_batch_keeping_leading(process_allreduce_p, True)
for _prim in (process_allgather_p, process_alltoall_p, process_permute_p):
    _batch_keeping_leading(_prim, False)
