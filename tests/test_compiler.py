"""The jit compiler's stages: passes, the fusion plan, tier 0 (blockwise NumPy, bit-identical to
one impl call per equation) and tier 1 (llvmlite kernels, within stated ulps of float64)."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import pyjax
import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src.backend import fusion, passes, tier0, tier1
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr

RNG = np.random.default_rng(14)


def _selu(x):
    return 1.0507 * jnp.where(x > 0, x, 1.67326 * jnp.exp(x) - 1.67326)


def _softmax(x):
    m = jnp.max(x, axis=-1, keepdims=True)
    e = jnp.exp(x - m)
    return e / jnp.sum(e, -1, keepdims=True)


def _layernorm(x):
    mu = x.mean(-1, keepdims=True)
    v = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / jnp.sqrt(v + 1e-5)


def _tanh_sum(x, w, b):
    return jnp.sum(jnp.tanh(x * w + b) ** 2)


def _mixed(x, y):
    z = jnp.where(x > y, jnp.sin(x) * 3 + y, jnp.cos(y) / (x * x + 1))
    return (jnp.maximum(z, -0.5) + jnp.log1p(jnp.abs(x)), jnp.sum(z, axis=1),
            jnp.max(jnp.tanh(z)), (z > 0).astype(jnp.float32) * x)


def _column_sum(x):
    return jnp.sum(jnp.exp(x) * 2, axis=0)


def _row_broadcast(x, r):
    return jnp.tanh(x * r[:, None] + 1.0) - x


_VEC = RNG.standard_normal(300_007).astype(np.float32)
_MAT = RNG.standard_normal((513, 1027)).astype(np.float32)
_MAT2 = RNG.standard_normal((513, 1027)).astype(np.float32)
_ROWS = RNG.standard_normal(513).astype(np.float32)
CASES = {
    "selu": (_selu, (_VEC,)),
    "tanh_sum": (_tanh_sum, (_VEC, np.float32(0.5), np.float32(0.1))),
    "softmax": (_softmax, (_MAT,)),
    "layernorm": (_layernorm, (_MAT,)),
    "mixed": (_mixed, (_MAT, _MAT2)),
    "column_sum": (_column_sum, (_MAT,)),
    "row_broadcast": (_row_broadcast, (_MAT, _ROWS)),
}


def _run(f, args, *, fused: bool, native: bool, monkeypatch) -> list[np.ndarray]:
    pyjax.clear_caches()
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1 << 15 if fused else 1 << 62)
    monkeypatch.setattr(tier1, "ENABLED", native)
    try:
        pyjax.config.update("jax_compile_sync", True)
        out = pyjax.jit(f)(*args)
    finally:
        pyjax.config.update("jax_compile_sync", False)
        pyjax.clear_caches()
    return [np.asarray(o) for o in pyjax.tree.leaves(out)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_tier0_blockwise_is_bit_identical(name, monkeypatch):
    f, args = CASES[name]
    unfused = _run(f, args, fused=False, native=False, monkeypatch=monkeypatch)
    fused = _run(f, args, fused=True, native=False, monkeypatch=monkeypatch)
    for a, b in zip(unfused, fused):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


def test_fusion_plan_clusters_and_dot_epilogue():
    x = np.ones((64, 32), np.float32)
    w = np.ones((32, 16), np.float32)
    b = np.ones(16, np.float32)
    closed = passes.optimize(pyjax.jit(lambda x, w, b: jnp.tanh(x @ w + b) * 2).trace(
        x, w, b).jaxpr)
    steps = fusion.plan(closed.jaxpr)
    calls = [s.eqn.primitive.name for s in steps if type(s) is fusion.Call]
    clusters = [s for s in steps if type(s) is fusion.Cluster]
    assert calls == ["dot_general"]
    assert len(clusters) == 2  # the bias broadcast alone, then add tanh mul over the dot's result
    epilogue = clusters[-1]
    assert epilogue.after == "dot_general"
    assert [e.primitive.name for e in epilogue.eqns] == ["add", "tanh", "mul"]
    selu = passes.optimize(pyjax.jit(_selu).trace(_VEC).jaxpr)  # jnp.where's jit is inlined
    (only,) = fusion.plan(selu.jaxpr)
    assert [e.primitive.name for e in only.eqns] == [
        "gt", "exp", "fused_multiply_add", "select_n", "mul"]


def test_reduction_ends_a_cluster():
    closed = passes.optimize(pyjax.jit(_softmax).trace(_MAT).jaxpr)
    shapes = [(type(s).__name__, [e.primitive.name for e in s.eqns]) for s in
              fusion.plan(closed.jaxpr) if type(s) is fusion.Cluster]
    assert ("Cluster", ["sub", "exp", "reduce_sum"]) in shapes


def test_inlining_keeps_results(monkeypatch):
    """Bodies are optimised on their own before inlining: results equal the nested calls'."""
    inner = pyjax.jit(lambda x: x * 3.0 + 1.0)
    f = lambda x: jnp.sin(inner(x)) * inner(x + 1)  # noqa: E731
    x = RNG.standard_normal(1000).astype(np.float32)
    closed = passes.optimize(pyjax.jit(f).trace(x).jaxpr)
    assert all(e.primitive.name != "jit" for e in closed.jaxpr.eqns)
    inlined = np.asarray(pyjax.jit(f)(x))
    pyjax.clear_caches()
    monkeypatch.setattr(passes, "PASSES", passes.PASSES[:1])
    nested = np.asarray(pyjax.jit(f)(x))
    pyjax.clear_caches()
    np.testing.assert_array_equal(inlined, nested)


def test_compile_sync_option_exists():
    assert pyjax.config.compile_sync is False
    pyjax.config.update("jax_compile_sync", True)
    try:
        assert pyjax.config.compile_sync is True
    finally:
        pyjax.config.update("jax_compile_sync", False)


# ---------------------------------------------------------------------------------------------
# tier 1
# ---------------------------------------------------------------------------------------------

_REASON = tier1.reason()
needs_tier1 = pytest.mark.skipif(_REASON is not None, reason=f"tier 1 unavailable: {_REASON}")

#: float64 references and the error allowed, in ulps of the output dtype times a scale (the
#: largest magnitude among the terms that cancel: libmvec's functions are within 4 ulps)
_REFERENCES = {
    "selu": (lambda x: 1.0507 * np.where(x > 0, x, 1.67326 * np.exp(x) - 1.67326),
             lambda x: 1.0507 * 1.67326 + np.abs(x), 8),
    "softmax": (lambda x: np.exp(x - x.max(-1, keepdims=True))
                / np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True),
                lambda x: np.exp(x - x.max(-1, keepdims=True))
                / np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True), 8),
    "row_broadcast": (lambda x, r: np.tanh(x * r[:, None] + 1.0) - x,
                      lambda x, r: 1 + np.abs(x) + np.abs(x * r[:, None]), 8),
}


@needs_tier1
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(_REFERENCES))
def test_tier1_within_ulps_of_float64(name, dtype, monkeypatch):
    f, args = CASES[name]
    ref_fn, scale_fn, ulps = _REFERENCES[name]
    with pyjax.enable_x64(dtype == np.float64):
        args = tuple(np.asarray(a, dtype) for a in args)
        wide = [np.asarray(a, np.float64) for a in args]
        ref, scale = ref_fn(*wide), scale_fn(*wide)
        eps = np.finfo(dtype).eps
        for native in (False, True):
            (out,) = _run(f, args, fused=True, native=native, monkeypatch=monkeypatch)
            assert out.dtype == dtype
            err = np.abs(out.astype(np.float64) - ref) / (eps * scale)
            assert err.max() <= ulps, (native, err.max())


@needs_tier1
@pytest.mark.parametrize("name", sorted(CASES))
def test_tier1_agrees_with_tier0(name, monkeypatch):
    f, args = CASES[name]
    t0 = _run(f, args, fused=True, native=False, monkeypatch=monkeypatch)
    t1 = _run(f, args, fused=True, native=True, monkeypatch=monkeypatch)
    for a, b in zip(t0, t1):
        assert a.dtype == b.dtype and a.shape == b.shape
        # float32 rounding of each step; sums and cancellations scale with their terms
        scale = np.maximum(np.abs(a).max(), 1.0)
        np.testing.assert_allclose(b, a, atol=1e-5 * scale, rtol=1e-5)


@needs_tier1
def test_background_compile_swaps_in(monkeypatch):
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1 << 15)
    monkeypatch.setattr(tier1, "ENABLED", True)
    pyjax.clear_caches()
    f = pyjax.jit(_selu)
    first = np.asarray(f(_VEC))  # tier 0 serves while the kernel compiles
    tier1.wait()
    compiled = f.lower(_VEC).compile()
    kernel = compiled._run.kernels["cluster0"]
    assert isinstance(kernel, tier1.Kernel)
    assert compiled._run.positional.__globals__["cluster0"] is kernel
    text = compiled.as_text()
    # float32 exp is XLA's own code (its floor), not libmvec's, so both tiers give its bits
    assert "def cluster0(" in text and "define void @kernel" in text and "@llvm.floor" in text
    second = np.asarray(f(_VEC))
    np.testing.assert_array_equal(second, first)
    pyjax.clear_caches()


@needs_tier1
def test_tier1_unsupported_cluster_says_why(monkeypatch):
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1 << 15)
    pyjax.clear_caches()
    cube = _MAT[:512].reshape(8, 64, 1027)
    middle = lambda x: jnp.sum(jnp.exp(x) * 2, axis=1)  # noqa: E731
    compiled = pyjax.jit(middle).lower(cube).compile()
    (reason,) = compiled._run.kernels.values()
    assert reason == "a reduction over axes neither leading nor trailing"
    assert ("; cluster0: tier 0 (a reduction over axes neither leading nor trailing)"
            in compiled.as_text())
    pyjax.clear_caches()


def test_tier1_off_names_the_reason(monkeypatch):
    monkeypatch.setattr(tier1, "ENABLED", False)
    assert tier1.reason() == "tier 1 is turned off (PYJAX_TIER1=off)"


# ---------------------------------------------------------------------------------------------
# tier 1 forced on every cluster (PYJAX_TIER1=force): what the whole suite found
# ---------------------------------------------------------------------------------------------

def _forced(f, args, *, native: bool, monkeypatch) -> np.ndarray:
    """f's one result with every cluster blockwise, and (native) run by a tier 1 kernel."""
    pyjax.clear_caches()
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
    monkeypatch.setattr(tier1, "ENABLED", native)
    try:
        pyjax.config.update("jax_compile_sync", True)
        out = pyjax.jit(f)(*args)
        kernels = pyjax.jit(f).lower(*args).compile()._run.kernels.values()
        assert any(isinstance(k, tier1.Kernel) for k in kernels) == native, list(kernels)
    finally:
        pyjax.config.update("jax_compile_sync", False)
        pyjax.clear_caches()
    return np.asarray(out)


def test_dead_cluster_is_not_run(monkeypatch):
    """A cluster whose values nothing reads (a dropped result) generates no call."""
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
    x = np.float32(-2.0)
    traced = pyjax.jit(lambda a: jnp.abs(a) * 2).trace(x).jaxpr
    jaxpr = traced.jaxpr
    dead = ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, [jaxpr.invars[0]], jaxpr.eqns),
                       traced.consts)
    program = tier0.generate(dead)
    assert program.clusters == {}
    assert program.run(np.asarray(x)) == [x]


@needs_tier1
@pytest.mark.parametrize("shape,axis", [((5,), None), ((3, 5), 1), ((129,), None),
                                        ((7, 1000), 1), ((4095,), None), ((2, 9, 11), (1, 2))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tier1_short_sums_have_tier0_bits(shape, axis, dtype, monkeypatch):
    """Rows shorter than _accumulation.LONG are summed in NumPy's pairwise order in their own
    dtype, as tier 0 sums them: jit(cov)-style cancellations then agree with eager."""
    x = (RNG.standard_normal(shape) * 10.0 ** RNG.uniform(-3, 3, shape)).astype(dtype)
    with pyjax.enable_x64(dtype == np.float64):
        f = lambda a: jnp.sum(a * 3.0, axis=axis)  # noqa: E731
        t0 = _forced(f, (x,), native=False, monkeypatch=monkeypatch)
        t1 = _forced(f, (x,), native=True, monkeypatch=monkeypatch)
    assert t0.dtype == t1.dtype == dtype and t0.tobytes() == t1.tobytes()


@needs_tier1
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tier1_exp2_is_xla_exp2(dtype, monkeypatch):
    """exp2 is exp(x * ln 2) with ln 2 rounded to the dtype, as in tier 0 (XLA's value), not
    libmvec's exact exp2: they differ by tens of ulps at large |x|."""
    x = np.array([-104.0, -60.5, 0.0, 1.0, 3.3, 100.0, 120.7], dtype)
    with pyjax.enable_x64(dtype == np.float64):
        t0 = _forced(jnp.exp2, (x,), native=False, monkeypatch=monkeypatch)
        t1 = _forced(jnp.exp2, (x,), native=True, monkeypatch=monkeypatch)
    np.testing.assert_allclose(t1, t0, rtol=4 * np.finfo(dtype).eps, atol=0)


@needs_tier1
def test_tier1_kernel_with_no_rows_touches_nothing(monkeypatch):
    """A (0, C) call returns at once (the row loop runs only while r < R)."""
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
    closed = passes.optimize(pyjax.jit(lambda a: jnp.exp(a) + 1).trace(_MAT).jaxpr)
    (cluster,) = fusion.plan(closed.jaxpr)
    kernel = tier1.build(cluster)
    kernel.compile()
    kernel.fn(0, 5, (ctypes.c_void_p * 2)())  # null buffers: any access would crash


@needs_tier1
def test_key_arrays_compile_as_their_key_data(monkeypatch):
    """Key-typed values reach fusion and tier 1 as their uint32 key data (passes.key_data),
    so a select over keys is an ordinary cluster, its predicate spread over the key axis."""
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
    pyjax.clear_caches()
    keys = pyjax.random.split(pyjax.random.key(0), 4)
    which = np.array([True, False, True, False])
    fn = pyjax.jit(lambda c, k: jnp.where(c, k, k[::-1]))
    compiled = fn.lower(which, keys).compile()
    assert not any(str(v).startswith("dtype key") for v in compiled._run.kernels.values())
    data = np.asarray(pyjax.random.key_data(keys))
    np.testing.assert_array_equal(pyjax.random.key_data(fn(which, keys)), data[[0, 2, 2, 0]])
    pyjax.clear_caches()


# ---------------------------------------------------------------------------------------------
# tier 1 reductions over leading axes (bias gradients, batch means), and the fusion plan's
# recomputation of cheap values (softmax's exp(x - max) is computed again, never stored)
# ---------------------------------------------------------------------------------------------

_LEADING = {"sum": lambda axis: lambda a: jnp.sum(a * 3.0, axis=axis),
            "mean": lambda axis: lambda a: jnp.mean(a * 3.0 - 1.0, axis=axis),
            "max": lambda axis: lambda a: jnp.max(a * 2.0, axis=axis),
            "min": lambda axis: lambda a: jnp.min(a - 1.0, axis=axis),
            # terms of several operations: a step of one vector (_leading_lanes)
            "sum of a chain": lambda axis: lambda a: jnp.sum(a * a * 0.5 - a, axis=axis)}


@needs_tier1
@pytest.mark.parametrize("shape,axis", [
    ((513, 1027), 0), ((1, 7), 0), ((5, 1), 0), ((300, 1), 0), ((9, 16), 0), ((3, 2049), 0),
    ((7, 9, 11), (0, 1)), ((7, 9, 11), 0), ((4100, 3), 0), ((5000, 33), 0), ((8, 33), 0),
    ((16, 31), 0), ((17, 2080), 0), ((9, 8200), 0)])
@pytest.mark.parametrize("op", sorted(_LEADING))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tier1_leading_reductions_have_tier0_bits(shape, axis, op, dtype, monkeypatch):
    """Over leading axes NumPy adds the rows one by one into each column's total (in the
    operand's dtype below LONG rows, in float64 from there on; a single column is one
    contiguous run, summed pairwise): tier 1 keeps that order, so the bits are tier 0's."""
    x = (RNG.standard_normal(shape) * 10.0 ** RNG.uniform(-3, 3, shape)).astype(dtype)
    with pyjax.enable_x64(dtype == np.float64):
        f = _LEADING[op](axis)
        t0 = _forced(f, (x,), native=False, monkeypatch=monkeypatch)
        t1 = _forced(f, (x,), native=True, monkeypatch=monkeypatch)
    assert t0.dtype == t1.dtype == dtype and t0.tobytes() == t1.tobytes()


@needs_tier1
@pytest.mark.parametrize("shape", [(0, 37), (0, 5, 3), (4, 0)])
@pytest.mark.parametrize("op", ["sum", "max"])
def test_tier1_leading_reduction_of_no_rows(shape, op, monkeypatch):
    """No rows: each column's total is the identity; no columns: nothing is touched."""
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
    f = {"sum": lambda a: jnp.sum(a * 2.0, axis=0),
         "max": lambda a: jnp.max(a * 2.0, axis=0, initial=-jnp.inf)}[op]
    x = np.zeros(shape, np.float32)
    closed = passes.optimize(pyjax.jit(f).trace(x).jaxpr)
    cluster = next(s for s in fusion.plan(closed.jaxpr) if type(s) is fusion.Cluster)
    assert cluster.reduction is not None
    kernel = tier1.build(cluster)
    kernel.compile()
    (out,) = kernel(x)
    expected = np.full(shape[1:], 0.0 if op == "sum" else -np.inf, np.float32)
    assert out.dtype == np.float32 and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


@needs_tier1
def test_tier1_bias_gradient_compiles(monkeypatch):
    """The bias gradient of a dense layer (a sum over the batch) is a tier 1 kernel."""
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1 << 15)
    monkeypatch.setattr(tier1, "ENABLED", True)
    x = RNG.standard_normal((256, 300)).astype(np.float32)
    b = RNG.standard_normal(300).astype(np.float32)
    loss = lambda b, x: jnp.sum(jnp.tanh(x + b) ** 2)  # noqa: E731
    pyjax.clear_caches()
    compiled = pyjax.jit(pyjax.grad(loss)).lower(b, x).compile()
    tier1.wait()
    leading = [s for s in compiled._run.steps if type(s) is fusion.Cluster and s.shape == x.shape
               and s.reduction is not None and s.reduction.params["axes"] == (0,)]
    assert len(leading) == 1 and tier0.blockwise(leading[0])
    assert all(isinstance(k, tier1.Kernel) for k in compiled._run.kernels.values())
    got = np.asarray(compiled(b, x))
    ref = (2 * np.tanh(x + b) * (1 - np.tanh(x + b) ** 2)).astype(np.float64).sum(0)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
    pyjax.clear_caches()


def _full_passes(f, x, monkeypatch, native: bool):
    """The plan of jit(f)(x) with tier 1 on or off: its clusters over x's shape, by the
    number that read x and the number that write a value of x's size."""
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1 << 15)
    monkeypatch.setattr(tier1, "ENABLED", native)
    closed = passes.optimize(pyjax.jit(f).trace(x).jaxpr)
    steps = fusion.plan(closed.jaxpr)
    big = [s for s in steps if type(s) is fusion.Cluster and s.shape == x.shape]
    reads = sum(closed.jaxpr.invars[0] in s.inputs for s in big)
    writes = sum(v.aval.shape == x.shape for s in big for v in s.outputs)
    return closed, steps, big, reads, writes


@needs_tier1
def test_softmax_recomputes_exp_instead_of_storing_it(monkeypatch):
    """Softmax in float64 is three passes over x (max; sum of exp; the quotient) and one full
    write: exp(x - max) (libmvec's) is computed again in the last pass, not written and read
    back."""
    x64 = _MAT.astype(np.float64)
    with pyjax.enable_x64(True):
        closed, steps, big, reads, writes = _full_passes(_softmax, x64, monkeypatch, True)
        # NumPy's exp costs more than the memory it saves: tier 0 alone stores exp(x - max)
        *_, reads0, writes0 = _full_passes(_softmax, x64, monkeypatch, native=False)
    assert [[e.primitive.name for e in s.eqns] for s in big] == [
        ["reduce_max"], ["sub", "exp", "reduce_sum"], ["sub", "exp", "div"]]
    assert (reads, writes) == (3, 1)
    last = big[-1]
    assert {e.primitive.name for e in last.recomputed} == {"sub", "exp"}
    assert all(e in big[1].eqns for e in last.recomputed)  # the same equations, not copies
    assert "sub* exp* div" in fusion.describe(steps, {v: "x" for v in closed.jaxpr.invars}
                                              | {v: "v" for s in steps if type(s) is
                                                 fusion.Cluster for v in s.outputs})
    assert (reads0, writes0) == (2, 2)


@needs_tier1
def test_float32_softmax_stores_exp(monkeypatch):
    """float32's exp is XLA's polynomial, dearer than writing and reading the value back:
    softmax stores exp(x - max) with the row sums and divides it in a last pass."""
    _, _, big, reads, writes = _full_passes(_softmax, _MAT, monkeypatch, native=True)
    assert [[e.primitive.name for e in s.eqns] for s in big] == [
        ["reduce_max"], ["sub", "exp", "reduce_sum"], ["div"]]
    assert (reads, writes) == (2, 2) and not any(s.recomputed for s in big)


@needs_tier1
def test_layernorm_is_three_passes(monkeypatch):
    _, _, big, reads, writes = _full_passes(_layernorm, _MAT, monkeypatch, native=True)
    assert len(big) == 3 and (reads, writes) == (3, 1)


def test_recomputation_skips_values_read_elsewhere(monkeypatch):
    """A value also returned (or read by a call) is stored anyway: it is not recomputed."""
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1 << 15)

    def f(x):
        e = x * 2.0 - 1.0
        return e / jnp.sum(e, -1, keepdims=True), e

    closed = passes.optimize(pyjax.jit(f).trace(_MAT).jaxpr)
    steps = fusion.plan(closed.jaxpr)
    assert not any(s.recomputed for s in steps if type(s) is fusion.Cluster)
    g = lambda x: (lambda e: e / jnp.sum(e, -1, keepdims=True))(x * 2.0 - 1.0)  # noqa: E731
    closed = passes.optimize(pyjax.jit(g).trace(_MAT).jaxpr)
    recomputed = [s for s in fusion.plan(closed.jaxpr) if type(s) is fusion.Cluster
                  and s.recomputed]
    assert len(recomputed) == 1  # arithmetic alone is recomputed on tier 0 as well


@needs_tier1
@pytest.mark.parametrize("name", ["softmax", "layernorm"])
def test_recomputing_plan_keeps_tier0_bits(name, monkeypatch):
    """Tier 0 running the recomputing plan (what serves while kernels compile) returns the
    bits of one impl call per equation."""
    f, args = CASES[name]
    args = tuple(a.astype(np.float64) for a in args)  # (float64's exp is recomputed)
    with pyjax.enable_x64(True):
        unfused = _run(f, args, fused=False, native=False, monkeypatch=monkeypatch)
        monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1 << 15)
        monkeypatch.setattr(tier1, "ENABLED", True)
        closed = passes.optimize(pyjax.jit(f).trace(*args).jaxpr)
        steps = fusion.plan(closed.jaxpr)
        program = tier0.generate(closed, steps)  # tier 0 only: no kernels attached
        (out,) = program.run(*args)
    assert any(type(s) is fusion.Cluster and s.recomputed for s in steps) == (name == "softmax")
    assert out.tobytes() == unfused[0].tobytes()


@needs_tier1
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tier1_layernorm_within_ulps_of_float64(dtype, monkeypatch):
    x = _MAT.astype(dtype)
    with pyjax.enable_x64(dtype == np.float64):
        (out,) = _run(_layernorm, (x,), fused=True, native=True, monkeypatch=monkeypatch)
    wide = x.astype(np.float64)
    mu = wide.mean(-1, keepdims=True)
    sd = np.sqrt(((wide - mu) ** 2).mean(-1, keepdims=True) + 1e-5)
    ref = (wide - mu) / sd
    # the mean's rounding, scaled by 1/sd, and each step's own
    err = np.abs(out - ref) / (np.finfo(dtype).eps * (np.abs(ref) + np.abs(mu) / sd + 1))
    assert out.dtype == dtype and err.max() <= 8, err.max()


def _two_reductions(x):
    e = jnp.exp(x - jnp.max(x, -1, keepdims=True))
    return e / jnp.sum(e, -1, keepdims=True), jnp.sum(e * x, -1)


def _log_softmax(x):
    z = x - jnp.max(x, -1, keepdims=True)
    return z - jnp.log(jnp.sum(jnp.exp(z), -1, keepdims=True))


def _column_scale(x):
    t = jnp.tanh(x * 0.5)
    return t * jnp.sum(t, 0)[None, :] + jnp.max(t, 1, keepdims=True)


def _read_by_dot(x):
    e = jnp.exp(x - jnp.max(x, -1, keepdims=True))
    return e / jnp.sum(e, -1, keepdims=True), e[:, :64] @ x[:64, :8]


_RECOMPUTE_CASES = {"two_reductions": _two_reductions, "log_softmax": _log_softmax,
                    "column_scale": _column_scale, "read_by_dot": _read_by_dot}


@needs_tier1
@pytest.mark.parametrize("name", sorted(_RECOMPUTE_CASES))
def test_recomputing_plans_agree(name, monkeypatch):
    """Plans that recompute values (or, for a value a call reads, store it) give tier 0 the
    bits of one impl call per equation, and tier 1 rounding of them (in float64, whose
    transcendentals are recomputed; float32's are XLA's polynomials, stored)."""
    f = _RECOMPUTE_CASES[name]
    x = _MAT.astype(np.float64)
    with pyjax.enable_x64(True):
        unfused = _run(f, (x,), fused=False, native=False, monkeypatch=monkeypatch)
        monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1 << 15)
        monkeypatch.setattr(tier1, "ENABLED", True)
        closed = passes.optimize(pyjax.jit(f).trace(x).jaxpr)
        steps = fusion.plan(closed.jaxpr)
        outs = tier0.generate(closed, steps).run(x)
        native = _run(f, (x,), fused=True, native=True, monkeypatch=monkeypatch)
    recomputed = [s for s in steps if type(s) is fusion.Cluster and s.recomputed]
    assert bool(recomputed) == (name != "read_by_dot")
    for a, b in zip(unfused, outs):
        assert a.tobytes() == np.asarray(b).tobytes()
    for a, b in zip(unfused, native):
        scale = np.maximum(np.abs(a).max(), 1.0)
        np.testing.assert_allclose(b, a, atol=1e-12 * scale, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# tier 1 on integers (wrapping arithmetic, bitwise ops, XLA's shifts, conversions, bitcasts)
# and XLA's float32 erf_inv: the bits of tier 0
# ---------------------------------------------------------------------------------------------

_INT_DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64]


def _int_chain(x, y):
    lax = pyjax.lax
    mixed = (x + y) * x - (y ^ (x | 3)) & ~y
    shifted = (lax.shift_left(x, y) + lax.shift_right_logical(x, y)
               + lax.shift_right_arithmetic(x, y))
    picked = jnp.where(x < y, jnp.maximum(x, y), jnp.minimum(-x, y)) + jnp.abs(x)
    as_float = (mixed + shifted + picked).astype(jnp.float32) * 0.5
    return mixed, shifted, picked, as_float, (x >= y) | (x == 3)


@needs_tier1
@pytest.mark.parametrize("dtype", _INT_DTYPES)
def test_tier1_integer_ops_have_tier0_bits(dtype, monkeypatch):
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, 1010, dtype=dtype, endpoint=True)
    # shift amounts in range, at the width, past it, and (signed) negative
    bits = 8 * np.dtype(dtype).itemsize
    y = np.array([0, 1, bits - 1, bits, bits + 5, 3, 7] * 143 + [2] * 9, dtype=dtype)
    if info.min < 0:
        y[::11] = -1
    with pyjax.enable_x64(np.dtype(dtype).itemsize == 8):
        t0 = _forced_all(_int_chain, (x, y), native=False, monkeypatch=monkeypatch)
        t1 = _forced_all(_int_chain, (x, y), native=True, monkeypatch=monkeypatch)
    for a, b in zip(t0, t1):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


@needs_tier1
def test_tier1_uniform_bits_to_float_and_erf_inv(monkeypatch):
    """random.normal's tail: uint32 bits -> float in [1, 2) by shift, or and bitcast, then
    XLA's erf_inv, all in one native kernel with tier 0's bits."""
    bits = RNG.integers(0, 2**32, 100_000, dtype=np.uint32)

    def normal_from_bits(b):
        lax = pyjax.lax
        f = lax.bitcast_convert_type(lax.shift_right_logical(b, np.uint32(9))
                                     | np.uint32(0x3F800000), jnp.float32) - 1.0
        return lax.erf_inv(f * 1.999 - 0.9995) * np.float32(np.sqrt(2))

    t0 = _forced_all(normal_from_bits, (bits,), native=False, monkeypatch=monkeypatch)
    t1 = _forced_all(normal_from_bits, (bits,), native=True, monkeypatch=monkeypatch)
    assert t0[0].tobytes() == t1[0].tobytes()


def _forced_all(f, args, *, native: bool, monkeypatch) -> list[np.ndarray]:
    """f's results with every cluster blockwise and (native) every cluster a tier 1 kernel."""
    pyjax.clear_caches()
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
    monkeypatch.setattr(tier1, "ENABLED", native)
    try:
        pyjax.config.update("jax_compile_sync", True)
        compiled = pyjax.jit(f).lower(*args).compile()
        kernels = list(compiled._run.kernels.values())
        if native:
            assert kernels and all(isinstance(k, tier1.Kernel) for k in kernels), kernels
        out = compiled(*args)
    finally:
        pyjax.config.update("jax_compile_sync", False)
        pyjax.clear_caches()
    return [np.asarray(o) for o in pyjax.tree.leaves(out)]


# ---------------------------------------------------------------------------------------------
# transposed operands and multi-axis iotas inside clusters
# ---------------------------------------------------------------------------------------------

def _symmetrize(x):
    return (x + x.T) * 0.5


def _batched_swap(x, y):
    return jnp.exp(x) * jnp.swapaxes(y, -1, -2) + 1.0


def _swap_row_sum(x, y):
    return jnp.sum(x * jnp.swapaxes(y, -1, -2), axis=-1)


def _swap_column_max(x, y):
    return jnp.max(jnp.tanh(x.T) - y, axis=0)


def _tril_mask(x):
    n = x.shape[-1]
    lax = pyjax.lax
    below = lax.broadcasted_iota(jnp.int32, (n, n), 0) >= lax.broadcasted_iota(jnp.int32, (n, n), 1)
    return jnp.where(below, x, 0.0)


def _swap_bool_int(x, y):
    return jnp.where(jnp.swapaxes(x > 0, -1, -2), y.T.astype(jnp.float32), 1.5)


_SQ = RNG.standard_normal((67, 67)).astype(np.float32)
_TALL = RNG.standard_normal((3, 37, 21)).astype(np.float32)
_WIDE = RNG.standard_normal((3, 21, 37)).astype(np.float32)
_TRANSPOSE_CASES = {
    "symmetrize": (_symmetrize, (_SQ,)),
    "symmetrize_f64": (_symmetrize, (_SQ.astype(np.float64),)),
    "batched_swap": (_batched_swap, (_TALL, _WIDE)),
    "swap_row_sum": (_swap_row_sum, (_TALL, _WIDE)),
    "swap_column_max": (_swap_column_max, (_TALL[0], _WIDE[0])),
    "tril_mask": (_tril_mask, (_SQ,)),
    "swap_bool_int": (_swap_bool_int, (_WIDE[0], (_WIDE[0] * 9).astype(np.int32))),
}


@pytest.mark.parametrize("name", sorted(_TRANSPOSE_CASES))
def test_transposed_operands_fuse_with_tier0_bits(name, monkeypatch):
    """A transpose of the last two axes joins the cluster that reads it (tier 1 gathers it
    across a row's columns); both tiers give the unfused results bit for bit."""
    f, args = _TRANSPOSE_CASES[name]
    unfused = _run(f, args, fused=False, native=False, monkeypatch=monkeypatch)
    t0 = _forced_all(f, args, native=False, monkeypatch=monkeypatch)
    t1 = _forced_all(f, args, native=True, monkeypatch=monkeypatch)
    for a, b, c in zip(unfused, t0, t1):
        assert a.dtype == b.dtype == c.dtype and a.shape == b.shape == c.shape
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def test_transpose_joins_its_readers_cluster(monkeypatch):
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
    closed = passes.optimize(pyjax.jit(_symmetrize).trace(_SQ).jaxpr)
    steps = fusion.plan(closed.jaxpr)
    assert [type(s).__name__ for s in steps] == ["Cluster"]
    assert [e.primitive.name for e in steps[0].eqns] == ["transpose", "add", "mul"]


def test_lone_transpose_stays_a_view(monkeypatch):
    """A transpose only a dot reads is no cluster: the dot gets NumPy's view."""
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
    closed = passes.optimize(pyjax.jit(lambda a, b: a @ b.T).trace(_SQ, _SQ).jaxpr)
    program = tier0.generate(closed)
    assert not program.clusters


def test_iota_pass_broadcasts_a_line():
    closed = passes.optimize(pyjax.jit(_tril_mask).trace(_SQ).jaxpr)
    iotas = [e for e in closed.jaxpr.eqns if e.primitive.name == "iota"]
    assert [e.params["shape"] for e in iotas] == [(67,), (67,)]
    np.testing.assert_array_equal(np.asarray(pyjax.jit(_tril_mask)(_SQ)), np.tril(_SQ))


def test_a_jit_only_traced_inside_another_is_not_compiled(monkeypatch):
    """An inner jit inlined into the outer program never runs on its own: only the outer
    function's jaxpr is compiled (the inner one once it is called by itself)."""
    from pyjax._src.backend import compiler
    compiled = []
    build = compiler.backend_compile_and_load

    def counting(backend, closed):
        compiled.append(closed)
        return build(backend, closed)

    monkeypatch.setattr(compiler, "backend_compile_and_load", counting)
    inner = pyjax.jit(lambda x: jnp.sin(x) * 3.0)
    outer = pyjax.jit(lambda x: inner(x) + 1.0)
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(outer(x)), np.sin(x) * 3 + 1, rtol=1e-6)
    assert len(compiled) == 1
    inner(x)
    assert len(compiled) == 2


# ---------------------------------------------------------------------------------------------
# row groups: clusters that read a row's reductions back, run a few rows at a time
# ---------------------------------------------------------------------------------------------

def _plan_of(f, *args):
    closed = passes.optimize(pyjax.jit(f).trace(*args).jaxpr)
    steps = fusion.plan(closed.jaxpr)
    return fusion.group_rows(closed.jaxpr, steps)


@pytest.mark.parametrize("name", ["softmax", "layernorm"])
def test_row_group_spans_the_row_reductions_and_their_readers(name, monkeypatch):
    """softmax's and layernorm's clusters (the row reductions, the per-row scalars between them,
    the clusters reading them back) form one group over the rows."""
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1 << 15)
    f, args = CASES[name]
    steps, groups = _plan_of(f, *args)
    (group,) = groups
    assert group.rows == (513,)
    assert group.steps == [s for s in steps if type(s) is fusion.Cluster]
    assert [tuple(v.aval.shape) for v in group.outputs] == [(513, 1027)]


def test_row_group_needs_two_big_clusters_over_the_rows(monkeypatch):
    """A lone row reduction, a reduction over leading axes, or clusters cut apart by a call
    form no group."""
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1 << 15)
    assert _plan_of(lambda x: jnp.sum(jnp.exp(x), -1), _MAT)[1] == []
    assert _plan_of(lambda x: x * jnp.sum(jnp.exp(x), 0), _MAT)[1] == []
    cut = lambda x: x - jnp.sort(jnp.max(x, -1))[:, None]  # noqa: E731
    assert _plan_of(cut, _MAT)[1] == []


def _rms_norm(x):
    scale = jnp.linspace(0.5, 2.0, x.shape[-1], dtype=x.dtype)
    return x * jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * scale


def _affine_layernorm(x):
    gamma = jnp.linspace(0.5, 2.0, x.shape[-1], dtype=x.dtype)
    return _layernorm(x) * gamma + gamma[::-1]


_GROUP_CASES = {"softmax": _softmax, "layernorm": _layernorm, "log_softmax": _log_softmax,
                "two_reductions": _two_reductions, "rms_norm": _rms_norm,
                "affine_layernorm": _affine_layernorm,
                "nn_softmax": lambda x: jax.nn.softmax(x, -1),
                "standardize": lambda x: jax.nn.standardize(x, -1)}


@needs_tier1
@pytest.mark.parametrize("shape", [(513, 1027), (6, 7, 300), (40, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(_GROUP_CASES))
def test_row_group_kernel_has_the_clusters_bits(name, dtype, shape, monkeypatch):
    """One native kernel running the whole group a few rows at a time returns the bits of its
    clusters' kernels run one after the other (and tier 0's where float32 transcendentals,
    XLA's code on both tiers, are all it computes)."""
    f = _GROUP_CASES[name]
    x = RNG.standard_normal(shape).astype(dtype)
    with pyjax.enable_x64(dtype == np.float64):
        t0 = _forced_all(f, (x,), native=False, monkeypatch=monkeypatch)
        grouped = _forced_all(f, (x,), native=True, monkeypatch=monkeypatch)
        monkeypatch.setattr(fusion, "group_rows", lambda jaxpr, steps: (steps, []))
        apart = _forced_all(f, (x,), native=True, monkeypatch=monkeypatch)
    for a, b, c in zip(t0, grouped, apart):
        assert b.dtype == c.dtype and b.tobytes() == c.tobytes()
        if dtype == np.float32:
            assert a.tobytes() == b.tobytes()


@needs_tier1
def test_row_group_kernel_is_installed(monkeypatch):
    """The group's function is replaced by its kernel, shown in the compiled text."""
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1 << 15)
    monkeypatch.setattr(tier1, "ENABLED", True)
    pyjax.clear_caches()
    try:
        pyjax.config.update("jax_compile_sync", True)
        compiled = pyjax.jit(_layernorm).lower(_MAT).compile()
        kernel = compiled._run.kernels["group0"]
        assert isinstance(kernel, tier1.Kernel)
        assert list(compiled._run.kernels) == ["group0"]  # (its clusters: no kernels of their own)
        assert compiled._run.positional.__globals__["group0"] is kernel
        text = compiled.as_text()
        assert "def group0(" in text and "; group0: tier 1" in text
        (out,) = pyjax.tree.leaves(compiled(_MAT))
    finally:
        pyjax.config.update("jax_compile_sync", False)
        pyjax.clear_caches()
    (ref,) = _run(_layernorm, (_MAT,), fused=True, native=False, monkeypatch=monkeypatch)
    assert np.asarray(out).tobytes() == ref.tobytes()


@needs_tier1
@pytest.mark.parametrize("cols", [129, 136, 200, 256, 257, 263, 300, 480, 512, 520, 1000, 1024,
                                  1031, 2056, 4095])
def test_tier1_interleaved_pairwise_blocks_keep_numpys_order(cols, monkeypatch):
    """Row sums whose pairwise split ends in two or four blocks (summed interleaved) or goes
    deeper have NumPy's bits, float32 and float64."""
    for dtype in (np.float32, np.float64):
        x = (RNG.standard_normal((3, cols)) * 10.0 ** RNG.uniform(-4, 4, (3, cols))).astype(dtype)
        with pyjax.enable_x64(dtype == np.float64):
            t1 = _forced(lambda a: jnp.sum(a, axis=1), (x,), native=True, monkeypatch=monkeypatch)
        assert t1.tobytes() == x.sum(1).tobytes()


_STREAM_X = RNG.standard_normal((40, 1024)).astype(np.float32)
_STREAM_CASES = {
    "selu_flat": (_selu, (_STREAM_X.reshape(-1)[:12288],)),
    "selu_3d": (_selu, (_STREAM_X.reshape(-1)[:480].reshape(3, 5, 32),)),
    "softmax": (_softmax, (_STREAM_X,)),
    "layernorm": (_layernorm, (_STREAM_X.reshape(8, 5, 1024),)),
    "mixed": (_mixed, (_STREAM_X, _STREAM_X[::-1].copy())),
    "row_broadcast": (_row_broadcast, (_STREAM_X, _STREAM_X[:, 0].copy())),
}


@needs_tier1
@pytest.mark.parametrize("name", sorted(_STREAM_CASES))
def test_tier1_streamed_outputs_keep_the_bits(name, monkeypatch):
    """Outputs of at least codegen.STREAM_BYTES (here: all) whose rows are whole steps are
    written with nontemporal stores into aligned buffers, with the same bits."""
    from pyjax._src.backend.tier1 import codegen
    f, args = _STREAM_CASES[name]
    t0 = _forced_all(f, args, native=False, monkeypatch=monkeypatch)
    monkeypatch.setattr(codegen, "STREAM_BYTES", 0)
    monkeypatch.setattr(tier1, "ENABLED", True)
    pyjax.clear_caches()
    pyjax.config.update("jax_compile_sync", True)
    try:
        assert "!nontemporal" in pyjax.jit(f).lower(*args).compile().as_text()
    finally:
        pyjax.config.update("jax_compile_sync", False)
    t1 = _forced_all(f, args, native=True, monkeypatch=monkeypatch)
    for a, b in zip(t0, t1):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_stop_gradient_is_dropped_before_fusion():
    """stop_gradient is the identity once traced (JAX lowers it to nothing): no call is left
    to cut jax.nn.softmax's clusters apart."""
    closed = passes.optimize(pyjax.jit(lambda x: jax.nn.softmax(x, -1)).trace(_MAT).jaxpr)
    assert "stop_gradient" not in {e.primitive.name for e in closed.jaxpr.eqns}


def test_row_group_moves_independent_steps_before_it(monkeypatch):
    """Steps amid a group's clusters that read nothing it made (the scale vector of an affine
    layernorm, built from an iota) run before the group, which then spans every cluster over
    the rows."""
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1 << 15)
    steps, (group,) = _plan_of(_affine_layernorm, _MAT)
    first = steps.index(group.steps[0])
    assert steps[first:first + len(group.steps)] == group.steps
    big = [s for s in steps if type(s) is fusion.Cluster and s.size >= 1 << 15]
    assert all(any(s is m for m in group.steps) for s in big)
