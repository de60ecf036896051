"""The jit compiler against NumPy and JAX on issue 14's workloads, in one run.

    PYTHONPATH=. /work/oracle/bin/python bench/compiler.py      # tier 0, tier 1, NumPy, JAX
    PYTHONPATH=. .venv/bin/python bench/compiler.py --quick     # small sizes (JAX optional)

Columns: pyjax tier 0 (PYJAX_TIER1=off: fused clusters as blockwise NumPy), pyjax tier 1
(llvmlite kernels), plain NumPy float32 where the computation has a natural NumPy form, and JAX
when it is importable.  Per workload: the first call (ms) of a fresh function (caches cleared, a
new closure jitted; pyjax compiles its kernels before the call, `jax_compile_sync`) and the
median steady call (ms; µs for the jit call overhead row).  Ratios are tier 1 / JAX, checked
against issue 14's targets; each column's results are checked against JAX's (or NumPy's)
values.  Last, the peak-RSS growth of jit(selu) on 50M floats (resource.getrusage), one fresh
process per column.

Tier 1 and JAX, the columns whose ratio is reported, are interleaved by default: per workload,
`--rounds` fresh processes each (2), tier 1 and JAX in turn (ABBA: a load drifting over a
workload's rounds falls on both alike), each column reporting the median of its rounds' steady
times and its first round's first call.  Run one column after another, minutes apart, a passing
load hit one column and not the other (t1/jax swung 0.86-1.32 between runs).  Tier 0 and NumPy
run one process each over all workloads, as every column does with `--per-column`.  The load
average is printed before and after.

pyjax keeps native kernels on disk under `jax_compilation_cache_dir`; it is off unless
JAX_COMPILATION_CACHE_DIR is set (JAX reads it too), and, as in JAX, entries that compiled in
under JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS (1 s) are not written: set it to 0 and run
twice for warm first calls.  The output says whether the cache was warm.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import platform
import subprocess
import sys
import time
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable

# bench/ holds scripts named like standard modules (random.py): keep it off the import path
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

import tempfile  # noqa: E402 (imports random)

import numpy as np  # noqa: E402

ROOT = os.path.dirname(_HERE)
FIRST_TARGET = 0.2  # first calls, tier 1 / JAX


# ---- the workloads: each written once against `jax` (pyjax, JAX, or NumPy posing as jnp) ----

def _softmax(jnp: Any, x: Any) -> Any:
    """softmax over the last axis, max-subtracted."""
    m = jnp.max(x, axis=-1, keepdims=True)
    e = jnp.exp(x - m)
    return e / jnp.sum(e, axis=-1, keepdims=True)


def _gelu(jnp: Any, x: Any) -> Any:
    """GELU's tanh form, as jax.nn.gelu(approximate=True) computes it."""
    return 0.5 * x * (1.0 + jnp.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def _attention(jnp: Any, w: Any, x: Any) -> Any:
    """One head over x (batch, seq, d): projections, softmax(q kᵀ/√d) v, output projection."""
    wq, wk, wv, wo = w
    q, k, v = x @ wq, x @ wk, x @ wv
    p = _softmax(jnp, q @ jnp.swapaxes(k, -1, -2) * (1.0 / math.sqrt(x.shape[-1])))
    return (p @ v) @ wo


def selu(jax: Any, d: dict) -> tuple:
    """selu over 1M floats: a short fused elementwise chain."""
    jnp = jax.numpy
    return (lambda x: 1.0507 * jnp.where(x > 0, x, 1.67326 * jnp.exp(x) - 1.67326)), (d["x1m"],)


def sin_cos(jax: Any, d: dict) -> tuple:
    """sin(10·exp(x))·cos(x²+1) over 50M floats: transcendental-bound."""
    jnp = jax.numpy
    return (lambda x: jnp.sin(10.0 * jnp.exp(x)) * jnp.cos(x * x + 1.0)), (d["x50m"],)


def tanh_sum(jax: Any, d: dict) -> tuple:
    """Σ tanh(x·w+b)² over 10M floats: elementwise chain ending in a full reduction."""
    jnp = jax.numpy
    return (lambda x, w, b: jnp.sum(jnp.tanh(x * w + b) ** 2)), (d["x10m"], d["w"], d["b"])


def softmax(jax: Any, d: dict) -> tuple:
    """softmax over the last axis of (4096, 1024)."""
    return (lambda x: _softmax(jax.numpy, x)), (d["big"],)


def layernorm(jax: Any, d: dict) -> tuple:
    """layer normalisation (no scale/shift) over the last axis of (4096, 1024)."""
    jnp = jax.numpy

    def f(x):
        mu = x.mean(-1, keepdims=True)
        v = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / jnp.sqrt(v + 1e-5)
    return f, (d["big"],)


def gelu_block(jax: Any, d: dict) -> tuple:
    """x @ W1 + b1 → gelu (tanh form) → @ W2 + b2, forward: matmuls with fused epilogues."""
    return (lambda x, w1, b1, w2, b2: _gelu(jax.numpy, x @ w1 + b1) @ w2 + b2), d["gelu"]


def mlp_step(jax: Any, d: dict) -> tuple:
    """value_and_grad of a 784-512-512-10 relu MLP's cross-entropy, batch 128."""
    jnp, nn = jax.numpy, jax.nn

    def loss(params, x, y):
        a, b, c = params
        h = nn.relu(nn.relu(x @ a) @ b)
        return -jnp.mean(jnp.sum(nn.log_softmax(h @ c) * y, -1))
    return jax.value_and_grad(loss), d["mlp"]


def deep_mlp(depth: int) -> Callable[[Any, dict], tuple]:
    """The builder of a grad step of a width-256 tanh MLP `depth` layers deep, batch 64."""
    def build(jax: Any, d: dict) -> tuple:
        """grad of mean(out²) w.r.t. every layer's weights and biases."""
        jnp = jax.numpy

        def loss(params, x):
            for w, b in params:
                x = jnp.tanh(x @ w + b)
            return jnp.mean(x * x)
        return jax.grad(loss), (d["deep"][:depth], d["x64"])
    return build


def scatter_add(jax: Any, d: dict) -> tuple:
    """x.at[idx].add(v): 1M values into 10M."""
    return (lambda x, i, v: x.at[i].add(v)), d["scatter"]


def scatter_add_numpy(d: dict) -> tuple:
    """np.add.at into a copy (jit without donation copies too)."""
    def f(x, i, v):
        out = x.copy()
        np.add.at(out, i, v)
        return out
    return f, d["scatter"]


def normal(jax: Any, d: dict) -> tuple:
    """random.normal(key, (10M,)) float32: threefry bits, then erf_inv."""
    n = d["n_normal"]
    return (lambda key: jax.random.normal(key, (n,))), (jax.random.key(0),)


def normal_numpy(d: dict) -> tuple:
    """NumPy's generator (a different algorithm: ziggurat on PCG64)."""
    rng = np.random.default_rng(0)
    n = d["n_normal"]
    return (lambda: rng.standard_normal(n, dtype=np.float32)), ()


def attention(jax: Any, d: dict) -> tuple:
    """one attention head: q/k/v projections, softmax(q kᵀ/√d) v, output projection."""
    return (lambda w, x: _attention(jax.numpy, w, x)), d["attn"]


def attention_grad(jax: Any, d: dict) -> tuple:
    """grad of the attention block's sum w.r.t. its four weight matrices."""
    return jax.grad(lambda w, x: _attention(jax.numpy, w, x).sum()), d["attn"]


def jit_call(jax: Any, d: dict) -> tuple:
    """a cached jitted `x + 1` on a float32 scalar: the per-call dispatch overhead."""
    return (lambda x: x + 1), (np.array(1.0, np.float32),)


def _on_numpy(build: Callable[[Any, dict], tuple]) -> Callable[[dict], tuple]:
    """The NumPy form of a workload written against jnp: the same function on np."""
    return lambda d: build(SimpleNamespace(numpy=np), d)


@dataclass(frozen=True)
class Workload:
    name: str
    build: Callable[[Any, dict], tuple]  # (jax module, data) -> (function to jit, args)
    numpy: Callable[[dict], tuple] | None  # data -> (NumPy function, args); None: no natural one
    target: float | None  # the bound on steady tier 1 / JAX
    repeat: int = 9  # steady calls timed (the median is reported)
    calls: int = 1  # calls per timed sample (the jit call overhead: many)
    same_as_numpy: bool = True  # False: NumPy computes other values (its own random generator)


WORKLOADS = [
    Workload("selu 1M", selu, _on_numpy(selu), 0.6),
    Workload("sin(10e^x)cos(x²+1) 50M", sin_cos, _on_numpy(sin_cos), 0.2, repeat=3),
    Workload("Σtanh(xw+b)² 10M", tanh_sum, _on_numpy(tanh_sum), 0.7, repeat=5),
    Workload("softmax 4096x1024", softmax, _on_numpy(softmax), 1.0),
    Workload("layernorm 4096x1024", layernorm, _on_numpy(layernorm), 1.0),
    Workload("GELU MLP block fwd", gelu_block, _on_numpy(gelu_block), None, repeat=5),
    Workload("MLP 784-512-512-10 step", mlp_step, None, 1.0),
    Workload("MLP w256 depth 2 grad", deep_mlp(2), None, 1.0),
    Workload("MLP w256 depth 8 grad", deep_mlp(8), None, 1.0),
    Workload("MLP w256 depth 32 grad", deep_mlp(32), None, 1.0, repeat=7),
    Workload("scatter-add 1M into 10M", scatter_add, scatter_add_numpy, 1.0, repeat=5),
    Workload("random.normal 10M", normal, normal_numpy, 1.0, repeat=3, same_as_numpy=False),
    Workload("attention fwd", attention, _on_numpy(attention), 1.0, repeat=7),
    Workload("attention grad", attention_grad, None, 1.0, repeat=5),
    Workload("jit call x+1 [µs]", jit_call, None, 0.4, repeat=7, calls=2000),
]


#: sizes (full, quick): elementwise lengths, softmax rows, GELU (batch, width, hidden), heads' batch
SIZES = {False: dict(n1m=1_000_000, n50m=50_000_000, n10m=10_000_000, rows=4096,
                     gelu=(512, 1024, 4096), attn_batch=8),
         True: dict(n1m=65_536, n50m=1_000_000, n10m=500_000, rows=256,
                    gelu=(128, 256, 1024), attn_batch=2)}


def make_data(quick: bool) -> dict:
    """Every workload's float32 inputs (seeded); `quick` shrinks the large ones."""
    rng = np.random.default_rng(0)
    s = SIZES[quick]

    def normal_(*shape: int, scale: float = 1.0) -> np.ndarray:
        return rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)

    n10m, (batch, width, hidden) = s["n10m"], s["gelu"]
    return {
        "x1m": normal_(s["n1m"]), "x50m": normal_(s["n50m"]), "x10m": normal_(n10m),
        "w": np.float32(0.5), "b": np.float32(0.1), "big": normal_(s["rows"], 1024),
        "gelu": (normal_(batch, width), normal_(width, hidden, scale=width ** -0.5),
                 normal_(hidden), normal_(hidden, width, scale=hidden ** -0.5), normal_(width)),
        "mlp": ((normal_(784, 512, scale=0.05), normal_(512, 512, scale=0.05),
                 normal_(512, 10, scale=0.05)), normal_(128, 784),
                np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]),
        "deep": [(normal_(256, 256, scale=1 / 16), np.zeros(256, np.float32))
                 for _ in range(32)],
        "x64": normal_(64, 256),
        "scatter": (normal_(n10m), rng.integers(0, n10m, n10m // 10).astype(np.int32),
                    normal_(n10m // 10)),
        "n_normal": n10m,
        "attn": ([normal_(256, 256, scale=1 / 16) for _ in range(4)],
                 normal_(s["attn_batch"], 256, 256)),
    }


def save_data(quick: bool, directory: str) -> None:
    """make_data's entries, one pickle each under `directory`, made once for every process."""
    for key, value in make_data(quick).items():
        with open(os.path.join(directory, key + ".pickle"), "wb") as f:
            pickle.dump(value, f, protocol=4)  # (arrays unpickled into memory of their own)


class SavedData(dict):
    """save_data's entries, each read when a workload first asks for it: a workload's process
    reads only its own inputs (make_data takes ~2.5 s at full sizes, each process over)."""

    def __init__(self, directory: str):
        super().__init__()
        self.directory = directory

    def __missing__(self, key: str) -> Any:
        with open(os.path.join(self.directory, key + ".pickle"), "rb") as f:
            self[key] = value = pickle.load(f)
        return value


# ---- measuring, in fresh processes ----

def _leaves(tree: Any) -> list:
    """The arrays of a result (nested tuples and lists)."""
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _leaves(t)]
    return [tree]


def fingerprint(result: Any) -> list:
    """Per output array: (Σ|x|, Σ x·ramp), in float64, to compare columns' values.  Summed by
    NumPy's own loops, not a BLAS dot: a multi-threaded dot leaves OpenBLAS's worker spinning
    on a core for ~0.1-0.3 s, which would halve the first steady samples of any column whose
    code runs threads of its own (pyjax softmax 4096x1024: 5.1 ms, 10.5 right after such a
    dot)."""
    out = []
    for leaf in _leaves(result):
        x = np.asarray(leaf, np.float64).ravel()
        ramp = np.linspace(-1.0, 1.0, x.size)
        out.append((float(np.abs(x).sum()), float(np.multiply(x, ramp).sum())))
    return out


def _time(fn: Callable, args: tuple, block: Callable, settle: Callable, w: Workload) -> tuple:
    """(first call ms, median steady ms per call, fingerprint of the result) of `fn`, fresh
    before the first call."""
    t = time.perf_counter()
    result = block(fn(*args))
    first = time.perf_counter() - t
    check = fingerprint(result)
    del result
    settle()  # background compiles finished: the steady state
    if w.calls > 1:  # a per-call overhead row: threads an earlier row left spinning (BLAS's
        time.sleep(0.5)  # idle workers) would take the shared cores from the first samples
    block(fn(*args))
    times = []
    for _ in range(w.repeat):
        t = time.perf_counter()
        for _ in range(w.calls):
            out = fn(*args)
        block(out)
        times.append((time.perf_counter() - t) / w.calls)
    return first * 1e3, float(np.median(times)) * 1e3, check


def _library(column: str) -> Any:
    """The jax module a column runs (pyjax, with `jax_compile_sync`, or JAX), warmed up by one
    small jitted call so that the process's one-time setup (XLA's client, LLVM's engine) is
    not charged to the first workload."""
    if column == "jax":
        import jax
    else:
        import pyjax as jax
        jax.config.update("jax_compile_sync", True)
    x = jax.numpy.asarray(np.ones(1 << 16, np.float32))
    jax.block_until_ready(jax.jit(lambda x: x * 2.0 + 1.0)(x))
    if column != "jax":  # (and the shared functions pyjax's first kernel sets compiling)
        from pyjax._src.backend import tier1
        tier1.wait()
    return jax


def run_column(column: str, d: dict, only: str | None = None) -> dict:
    """{workload: (first ms, steady ms, fingerprint) or an error string} for one column on
    make_data's inputs `d` (the workload named `only`, or all), plus `_cache`, the state of its
    caches."""
    out: dict[str, Any] = {}
    jax = None if column == "numpy" else _library(column)
    settle = lambda: None  # noqa: E731
    if column.startswith("tier"):
        from pyjax._src.backend import tier1
        settle = tier1.wait
    for w in WORKLOADS:
        if only is not None and w.name != only:
            continue
        try:
            if jax is None:
                if w.numpy is None:
                    continue
                fn, args = w.numpy(d)
                out[w.name] = _time(fn, args, lambda r: r, settle, w)
                continue
            f, args = w.build(jax, d)
            args = jax.tree_util.tree_map(
                lambda a: jax.numpy.asarray(a) if isinstance(a, np.ndarray) else a, args)
            jax.block_until_ready(args)
            jax.clear_caches()
            out[w.name] = _time(jax.jit(f), args, jax.block_until_ready, settle, w)
        except Exception as e:  # noqa: BLE001 - reported in the table, the rest still run
            out[w.name] = f"{type(e).__name__}: {e}"[:300]
    out["_cache"] = _cache_state(column)
    return out


#: a column's cache state's counts, added up over its processes (`_merged`)
_COUNTS = ("processes", "loaded", "compiled", "writes", "skipped")


def _cache_state(column: str) -> dict:
    """This process's disk caches of compiled code: {"text": ...}, or tier 1's numbers."""
    if column == "jax":
        import jax
        path = jax.config.jax_compilation_cache_dir
        return {"text": f"JAX {jax.__version__}, persistent compilation cache: {path or 'off'}"}
    if column == "numpy":
        return {"text": ""}
    if column == "tier0":
        return {"text": "tier 0: no native kernels (PYJAX_TIER1=off)"}
    from pyjax._src.backend.tier1 import disk_cache, engine
    from pyjax._src.config import config as jax_config
    path, counts, stats = disk_cache.directory(), engine.counts(), disk_cache.statistics()
    return {"path": path, "processes": 1, "loaded": counts["loaded"],
            "compiled": counts["compiled"], "writes": stats["writes"],
            "skipped": stats["skipped"], "threads": engine.threads()[0],
            "min_time": jax_config.persistent_cache_min_compile_time_secs}


def _merged(states: list[dict]) -> dict:
    """One state for a column's processes: their counts added up."""
    out = dict(states[0])
    if "text" not in out:
        out.update({k: sum(s[k] for s in states) for k in _COUNTS})
    return out


def _cache_info(state: dict) -> str:
    """Whether the disk caches of compiled code were in use, and warm."""
    if "text" in state:
        return state["text"]
    n, processes = state["threads"], state["processes"]
    threads = f"; tier 1 kernels split over up to {n} thread{'s' * (n > 1)}"
    where = "in-process" if processes == 1 else f"in its first round's {processes} processes"
    if state["path"] is None:
        return (f"pyjax disk cache of native kernels: off (jax_compilation_cache_dir unset), "
                f"so cold: {state['compiled']} kernels compiled {where}{threads}")
    loaded, compiled = state["loaded"], state["compiled"]
    warm = "warm" if compiled == 0 else "cold" if loaded == 0 else "part warm"
    return (f"pyjax disk cache of native kernels at {state['path']}: {warm} ({loaded} kernels "
            f"loaded, {compiled} compiled {where}; {state['writes']} written, "
            f"{state['skipped']} under jax_persistent_cache_min_compile_time_secs="
            f"{state['min_time']}){threads}")


def peak_selu(column: str, n: int) -> float:
    """MiB of peak RSS above the input for jit(selu) on n floats (a fresh process)."""
    code = f"""
import resource, numpy as np
x = np.random.default_rng(0).standard_normal({n}, dtype=np.float32)
column = {column!r}
if column == 'numpy':
    f, block = lambda x: 1.0507 * np.where(x > 0, x, 1.67326 * np.exp(x) - 1.67326), lambda r: r
else:
    if column == 'jax':
        import jax
    else:
        import pyjax as jax
        jax.config.update('jax_compile_sync', True)
    jnp, block = jax.numpy, jax.block_until_ready
    f = jax.jit(lambda x: 1.0507 * jnp.where(x > 0, x, 1.67326 * jnp.exp(x) - 1.67326))
block(f(np.zeros(1 << 16, np.float32)))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out = block(f(x))
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=_env(column))
    try:
        return float(res.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return float("nan")


def _env(column: str) -> dict:
    """The environment of a column's process: pyjax importable, tier 1 off for tier 0."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    if column == "tier0":
        env["PYJAX_TIER1"] = "off"
    return env


def _spawn(column: str, data: str, only: str | None = None) -> dict:
    """run_column in a fresh process (first calls and in-process kernel caches start cold),
    on save_data's directory `data`: a failed process answers {"_info": why}."""
    cmd = [sys.executable, os.path.abspath(__file__), "--column", column, "--data", data] + (
        ["--workload", only] if only is not None else [])
    res = subprocess.run(cmd, capture_output=True, text=True, env=_env(column))
    try:
        return json.loads(res.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"_info": f"{column} failed: {tail[0]}"}


def interleaved(columns: list[str], data: str, rounds: int) -> dict:
    """{column: results} as run_column's, each workload run in `rounds` fresh processes per
    column, the columns in turn (in reverse every other round): per column, the first round's
    first call and fingerprint, the median of the rounds' steady times (a round's error is
    reported instead)."""
    results: dict[str, dict] = {c: {} for c in columns}
    states: dict[str, list] = {c: [] for c in columns}
    for w in WORKLOADS:
        runs: dict[str, list] = {c: [] for c in columns}
        for r in range(rounds):
            for c in columns if r % 2 == 0 else columns[::-1]:
                out = _spawn(c, data, w.name)
                runs[c].append(out.get(w.name, out.get("_info", "no result")))
                if r == 0 and "_cache" in out:
                    states[c].append(out["_cache"])
        for c, got in runs.items():
            failed = [g for g in got if isinstance(g, str)]
            if failed:
                results[c][w.name] = failed[0]
            else:
                first, _, check = got[0]
                results[c][w.name] = [first, float(np.median([g[1] for g in got])), check]
    for c in columns:
        if states[c]:
            results[c]["_cache"] = _merged(states[c])
    return results


# ---- the report ----

def _has_jax() -> bool:
    """Whether this Python imports a working JAX (asked in a child: JAX is slow to import)."""
    res = subprocess.run([sys.executable, "-c", "import jax; jax.devices()"],
                         capture_output=True, env=_env("jax"))
    return res.returncode == 0


def _cell(result: Any, unit: float) -> str:
    """A column's two cells: first-call ms and steady time (× `unit`), blank or `error`."""
    if result is None:
        return f"{'':>10s}{'':>9s}"
    if isinstance(result, str):
        return f"{'error':>10s}{'':>9s}"
    first, steady, _ = result
    return f"{first:10.1f}{steady * unit:9.2f}"


def _ratio(a: Any, b: Any, i: int) -> float | None:
    """a[i] / b[i] when both columns have times, else None."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and b[i] > 0:
        return a[i] / b[i]
    return None


def report(results: dict, quick: bool, rounds: int | None) -> None:
    """Print the table, the targets, the caches' state and any errors; `rounds`: tier 1's and
    JAX's per workload (interleaved), None where each column ran in one process."""
    cols = list(results)
    with_jax = "jax" in results
    print(f"host: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, NumPy {np.__version__}"
          + (", quick sizes" if quick else ""))
    if rounds is None:
        print("ms: first call of a fresh function (trace + compile + run; caches cleared, but a "
              "native kernel an earlier row compiled\nis reused within a pyjax column's "
              "process), then the median steady call (µs for the jit call row); t1/jax: tier 1 "
              "/ JAX")
    else:
        print(f"ms: first call of a fresh function (trace + compile + run; caches cleared; tier "
              f"1 and JAX: a fresh process per workload,\nthe first round's; tier 0 and NumPy: "
              f"one process each), then the median steady call (µs for the jit call row; tier 1 "
              f"and\nJAX: the median of {rounds} rounds' medians, the two columns' processes in "
              f"turn); t1/jax: tier 1 / JAX")
    head = f"{'workload':26s}" + "".join(f"{c + ' 1st':>10s}{c:>9s}" for c in cols)
    if with_jax:
        head += f"{'t1/jax':>8s}{'target':>8s}{'met':>5s}{'1st t1/jax':>11s}{'met':>5s}"
    print(head)
    errors = []
    for w in WORKLOADS:
        unit = 1e3 if w.calls > 1 else 1.0
        line = f"{w.name:26s}" + "".join(_cell(results[c].get(w.name), unit) for c in cols)
        errors += [f"{c} {w.name}: {results[c][w.name]}" for c in cols
                   if isinstance(results[c].get(w.name), str)]
        if with_jax:
            t1, jx = results["tier1"].get(w.name), results["jax"].get(w.name)
            steady, first = _ratio(t1, jx, 1), _ratio(t1, jx, 0)
            line += f"{steady:8.2f}" if steady is not None else f"{'':8s}"
            line += f"{w.target:8.1f}" if w.target is not None else f"{'-':>8s}"
            line += f"{_met(steady, w.target):>5s}"
            line += f"{first:11.2f}" if first is not None else f"{'':11s}"
            line += f"{_met(first, FIRST_TARGET):>5s}"
        print(line)
    for c in cols:
        info = results[c].get("_info") or _cache_info(results[c].get("_cache", {"text": ""}))
        if info:
            print(info)
    for e in errors:
        print("error:", e)
    for w in WORKLOADS:
        for line in _mismatches(results, w):
            print("values differ:", line)


def _mismatches(results: dict, w: Workload, rtol: float = 1e-3) -> list[str]:
    """Columns whose results for `w` differ from the reference column's (JAX, else NumPy,
    else tier 0) by more than `rtol` in Σ|x| or in Σ x·ramp (relative to Σ|x|)."""
    prints = {c: r[w.name][2] for c, r in results.items() if isinstance(r.get(w.name), list)}
    if not w.same_as_numpy:
        prints.pop("numpy", None)
    ref = next((c for c in ("jax", "numpy", "tier0") if c in prints), None)
    out = []
    for c, got in prints.items():
        want = prints[ref]
        bad = len(got) != len(want) or any(
            abs(g_abs - w_abs) > rtol * w_abs or abs(g_ramp - w_ramp) > rtol * w_abs
            for (g_abs, g_ramp), (w_abs, w_ramp) in zip(got, want))
        if c != ref and bad:
            out.append(f"{w.name}: {c} {got} vs {ref} {want}"[:400])
    return out


def _met(ratio: float | None, target: float | None) -> str:
    """yes / NO against the target, - without one."""
    if ratio is None or target is None:
        return "-"
    return "yes" if round(ratio, 2) <= target else "NO"  # as printed: 1.004 meets 1.0


def _compile_bytecode() -> None:
    """pyjax's modules compiled to bytecode before the columns start, as pip compiles an
    installed package's (JAX's come so): under PYTHONDONTWRITEBYTECODE (set on the dev box) a
    checkout would compile its sources again in every fresh process, and a first call that
    imports a module lazily (jax.nn in the MLP step) would pay for it (~190 ms there)."""
    import compileall
    compileall.compile_dir(os.path.join(ROOT, "pyjax"), quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="fresh processes per workload for tier 1 and JAX, in turn (2)")
    parser.add_argument("--per-column", action="store_true",
                        help="each column in one process over all workloads, one after another")
    parser.add_argument("--column", help=argparse.SUPPRESS)  # internal: one column, as JSON
    parser.add_argument("--data", help=argparse.SUPPRESS)  # internal: save_data's directory
    parser.add_argument("--workload", help=argparse.SUPPRESS)  # internal: only this one
    opts = parser.parse_args()
    if opts.column:
        print(json.dumps(run_column(opts.column, SavedData(opts.data), opts.workload)))
        return
    columns = ["tier0", "tier1", "numpy"] + (["jax"] if _has_jax() else [])
    _compile_bytecode()
    print("load average (1, 5, 15 min) before: %.2f %.2f %.2f" % os.getloadavg(), flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-compiler-") as data:
        save_data(opts.quick, data)
        if opts.per_column:
            results, rounds = {c: _spawn(c, data) for c in columns}, None
        else:
            rounds = max(1, opts.rounds)
            results = {c: _spawn(c, data) for c in ("tier0", "numpy")}
            results.update(interleaved([c for c in columns if c in ("tier1", "jax")], data,
                                       rounds))
            results = {c: results[c] for c in columns}
    print("load average (1, 5, 15 min) after: %.2f %.2f %.2f" % os.getloadavg())
    report(results, opts.quick, rounds)
    n = 1_000_000 if opts.quick else 50_000_000
    peaks = {c: peak_selu(c, n) for c in columns}
    print(f"peak RSS above the input, jit(selu) on {n // 1_000_000}M float32 (MiB, a fresh "
          "process each): " + ", ".join(f"{c} {v:.0f}" for c, v in peaks.items()))


if __name__ == "__main__":
    main()
