"""Latency and bandwidth of psum, all_gather and ppermute under pmap, vs message size.

    .venv/bin/python bench/collectives.py [--quick] [--jax-python /work/oracle/bin/python]

One run prints one table, four columns of runs, each a worker process running this file:
  pyjax pmap on 4 local devices (PYJAX_NUM_CPU_DEVICES=4);
  pyjax across 2 MPI processes x 2 devices (`mpirun -n 2 python -m mpi4py`, 4 global devices);
  JAX's pmap on 4 forced CPU devices, when `--jax-python` names a Python that imports JAX;
  JAX's pmap across 2 processes x 2 forced devices (jax.distributed on this machine, its CPU
  collectives over gloo), with `--jax-python` too.
pyjax's local column is compared with JAX's, its 2-process column with JAX's 2 processes (the
same layout) and with JAX's local pmap.
A message is one device's operand (float32; all_gather's result is 4 times larger) and the
bandwidth is message bytes / time.  ppermute shifts by one around the ring of 4 devices.
Sizes run 1 KB - 64 MB (1 MB with --quick).  The MPI runs use the venv's mpirun (pip's
MPICH) unless PYJAX_MPIRUN names another (Open MPI's: PYJAX_MPIRUN=/usr/bin/mpirun); the
table says which MPI ran.  Issue 15's target: >= 10x faster than JAX for
messages <= 64 KB.  pyjax's local devices share one memory, so a local all_gather's result
is a broadcast view of the stacked operands (no copy): its time does not grow with the size.
"""
import os
import sys

# bench/random.py would shadow the standard library's random module: bench/ goes last
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE] + [HERE]

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from mpi_launch import IN_JOB, run_under_mpirun  # noqa: E402

KB = 1024
SIZES = [KB * 4 ** i for i in range(9)]  # 1 KB ... 64 MB
QUICK_LAST = 1024 * KB
DEVICES = 4
COLLECTIVES = ("psum", "all_gather", "ppermute")
LOCAL_COLUMN, MPI_COLUMN, JAX_COLUMN, JAX_MP_COLUMN = (
    "pyjax pmap 4 local", "pyjax 2 procs x 2", "JAX pmap 4 devices", "JAX 2 procs x 2")
#: the ratios printed: (label, pyjax's column, JAX's column)
RATIOS = (("local", LOCAL_COLUMN, JAX_COLUMN), ("2p/2p", MPI_COLUMN, JAX_MP_COLUMN),
          ("2p/local", MPI_COLUMN, JAX_COLUMN))
#: where JAX's processes meet (jax.distributed's coordinator)
JAX_COORDINATOR = "127.0.0.1:12871"
TARGET_SECONDS = 0.04  # per round of calls
ROUNDS = 7  # the best round counts (2 for calls over 20 ms)


def label(size: int) -> str:
    return f"{size // (KB * KB)} MB" if size >= KB * KB else f"{size // KB} KB"


def bodies(lax: object) -> dict:
    ring = [(i, (i + 1) % DEVICES) for i in range(DEVICES)]
    return {"psum": lambda v: lax.psum(v, "i"),
            "all_gather": lambda v: lax.all_gather(v, "i"),
            "ppermute": lambda v: lax.ppermute(v, "i", ring)}


def expected(name: str, rows: np.ndarray, first: int) -> np.ndarray:
    """What this process's devices hold after `name` when global device g holds g + 1."""
    every = np.arange(1, DEVICES + 1, dtype=np.float32)[:, None] * np.ones(rows.shape[1:],
                                                                           np.float32)
    local = range(first, first + rows.shape[0])
    if name == "psum":
        return np.stack([every.sum(0)] * len(local))
    if name == "all_gather":
        return np.stack([every] * len(local))
    return np.stack([every[(g - 1) % DEVICES] for g in local])


def settle(jax: object) -> None:
    """pyjax: wait for the native kernels it compiles in the background after a first call
    (the steady state, as JAX's program is after its first, compiling call)."""
    if jax.__name__ == "pyjax":
        from pyjax._src.backend import tier1
        tier1.wait()


def measure(jax: object, sizes: list, agree: object, barrier: object) -> dict:
    """Seconds per call of each collective at each size on this process's local devices;
    `agree(n)` makes every process use the same repeat count, `barrier()` lines them up."""
    local, first = jax.local_device_count(), jax.process_index() * jax.local_device_count()
    results = {}
    put = jax.pmap(lambda v: v, "i")
    for name, body in bodies(jax.lax).items():
        fn = jax.pmap(body, "i")
        for size in sizes:
            host = np.repeat(np.arange(first + 1, first + local + 1, dtype=np.float32)[:, None],
                             size // 4, axis=1)
            x = put(host)  # resident on the devices, as a training step's values are
            out = fn(x).block_until_ready()
            settle(jax)
            if size <= QUICK_LAST:
                np.testing.assert_array_equal(np.asarray(out), expected(name, host, first))
            del out
            start = time.perf_counter()
            fn(x).block_until_ready()
            once = time.perf_counter() - start
            repeats = agree(max(2, min(2000, int(TARGET_SECONDS / max(once, 1e-7)))))
            best = float("inf")
            for _ in range(agree(ROUNDS if once < 0.02 else 2)):  # slow calls vary less
                barrier()
                start = time.perf_counter()
                for _ in range(repeats):
                    fn(x).block_until_ready()
                best = min(best, (time.perf_counter() - start) / repeats)
            results[f"{name} {size}"] = best
            del x
    return results


def worker(library: str, sizes: list, out_path: str) -> None:
    """Measure in this process (an MPI rank under mpirun) and write the results as JSON."""
    if library == "jax":
        import jax
    else:
        import pyjax as jax
    agree, barrier, mpi = (lambda n: n), (lambda: None), None
    if library == "jax" and "BENCH_JAX_PROCESS" in os.environ:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        jax.distributed.initialize(JAX_COORDINATOR, 2, int(os.environ["BENCH_JAX_PROCESS"]))
        from jax.experimental import multihost_utils
        agree = lambda n: int(np.max(multihost_utils.process_allgather(np.int32(n))))  # noqa
        barrier = lambda: multihost_utils.sync_global_devices("round")  # noqa: E731
        mpi = "gloo (jax.distributed)"
    elif IN_JOB:
        jax.distributed.initialize()
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        agree, barrier = (lambda n: comm.allreduce(n, op=MPI.MAX)), comm.Barrier
        mpi = MPI.Get_library_version().splitlines()[0].split(",")[0].strip()
    if jax.device_count() != DEVICES:
        raise SystemExit(f"{library}: {jax.device_count()} devices, {DEVICES} wanted")
    results = measure(jax, sizes, agree, barrier)
    if jax.process_index() == 0:
        with open(out_path, "w") as f:
            json.dump({"results": results, "mpi": mpi, "layout": f"{jax.process_count()} "
                       f"process(es) x {jax.local_device_count()} devices"}, f)


def run_worker(library: str, sizes: list, python: str, env: dict, processes: int = 0
               ) -> dict | None:
    """Results of a worker run in a subprocess (under mpirun when `processes`)."""
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "results.json")
        args = ["--worker", library, "--out", out_path, "--sizes", ",".join(map(str, sizes))]
        if processes and library == "jax":
            if not _run_jax_processes(python, args, env, processes):
                return None
        elif processes:
            if not run_under_mpirun(__file__, processes, args, env=env, timeout=1200):
                return None
        else:
            full = {k: v for k, v in os.environ.items()
                    if not k.startswith(("PYJAX_NUM", "JAX_NUM", "XLA_FLAGS"))}
            proc = subprocess.run([python, os.path.abspath(__file__), *args], env={**full, **env},
                                  timeout=1200)
            if proc.returncode:
                print(f"{library} worker ({python}) failed with exit status {proc.returncode}")
                return None
        with open(out_path) as f:
            run = json.load(f)
        if run["mpi"]:
            print(f"{library} across processes ran on {run['mpi']}")
        return run["results"]


def _run_jax_processes(python: str, args: list, env: dict, processes: int) -> bool:
    """Run JAX's worker as `processes` processes of one jax.distributed job on this machine."""
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("PYJAX_NUM", "JAX_NUM", "XLA_FLAGS"))}
    procs = [subprocess.Popen([python, os.path.abspath(__file__), *args],
                              env={**full, **env, "BENCH_JAX_PROCESS": str(i)})
             for i in range(processes)]
    codes = [p.wait(timeout=1200) for p in procs]
    if any(codes):
        print(f"JAX's workers across processes failed with exit statuses {codes}")
    return not any(codes)


def cell(seconds: float | None, size: int) -> str:
    if seconds is None:
        return f"{'-':>9} {'-':>8}"
    return f"{seconds * 1e6:9.1f} {size / seconds / 1e9:8.3f}"


def ratio(jax_s: float | None, ours: float | None) -> str:
    return f"{jax_s / ours:7.1f}x" if jax_s and ours else f"{'-':>8}"


def report(runs: dict, sizes: list) -> None:
    columns = list(runs)
    ratios = [(label, ours, theirs) for label, ours, theirs in RATIOS
              if runs.get(ours) and runs.get(theirs)]
    print("\n" + " " * 22 + "".join(f"{c:^19}" for c in columns)
          + ("   JAX time / pyjax time" if ratios else ""))
    print(f"{'collective':<11}{'size':>7}    " + "".join(f"{'us':>9} {'GB/s':>8} " for _ in columns)
          + "".join(f"{label:>9}" for label, _, _ in ratios))
    speedups: dict = {r: [] for r in ratios}
    for name in COLLECTIVES:
        for size in sizes:
            key = f"{name} {size}"
            row = f"{name:<11}{label(size):>7}    "
            row += "".join(cell((runs[c] or {}).get(key), size) + " " for c in columns)
            for r in ratios:
                mine, theirs = runs[r[1]].get(key), runs[r[2]].get(key)
                row += " " + ratio(theirs, mine)
                if mine and theirs and size <= 64 * KB:
                    speedups[r].append(theirs / mine)
            print(row)
    for (_, ours, theirs), values in speedups.items():
        if values:
            verdict = "met" if min(values) >= 10 else "not met"
            print(f"{ours} against {theirs}: JAX / pyjax for messages <= 64 KB from "
                  f"{min(values):.1f}x to {max(values):.1f}x (target >= 10x: {verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="stop at 1 MB")
    parser.add_argument("--jax-python", help="a Python that imports JAX, for its pmap")
    parser.add_argument("--upto", type=int, help="the largest message, in bytes")
    parser.add_argument("--worker", choices=("pyjax", "jax"), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, [int(s) for s in args.sizes.split(",")], args.out)
        return
    largest = args.upto or (QUICK_LAST if args.quick else SIZES[-1])
    sizes = [s for s in SIZES if s <= largest]
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; a message is one "
          "device's operand (float32), bandwidth = message bytes / time")
    runs = {LOCAL_COLUMN: run_worker("pyjax", sizes, sys.executable,
                                     {"PYJAX_NUM_CPU_DEVICES": str(DEVICES)})}
    runs[MPI_COLUMN] = run_worker("pyjax", sizes, sys.executable,
                                  {"PYJAX_NUM_CPU_DEVICES": str(DEVICES // 2)}, processes=2)
    if args.jax_python:
        runs[JAX_COLUMN] = run_worker(
            "jax", sizes, args.jax_python,
            {"XLA_FLAGS": f"--xla_force_host_platform_device_count={DEVICES}"})
        runs[JAX_MP_COLUMN] = run_worker(
            "jax", sizes, args.jax_python,
            {"XLA_FLAGS": f"--xla_force_host_platform_device_count={DEVICES // 2}"},
            processes=2)
    report(runs, sizes)


if __name__ == "__main__":
    main()
