"""Record JAX's jax.nn values, errors and jaxprs into tests/data/nn.json.

    /work/oracle/bin/python tests/oracle/record_nn.py

Needs jax==0.10.2.  Every case of `nn_cases(jax, jnp, lax, np)` is recorded with x64 off
(float32 inputs) and on (float64 where the case says so): its make_jaxpr text (or JAX's error)
unless the case is value-only, and its eager value (or error).  The case list never imports
jax itself: tests/test_nn.py builds the same cases under pyjax.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "nn.json")
sys.path.insert(0, HERE)

INF, NAN = float("inf"), float("nan")
#: elementwise grid: both tails, signed zeros, tiny values, the kinks at -1, 0, 1, 6, NaN
GRID = [-INF, -1e30, -100.0, -30.0, -20.0, -10.0, -6.0, -3.0, -2.0, -1.5, -1.0, -0.75, -0.5,
        -1e-3, -1e-30, -0.0, 0.0, 1e-30, 1e-3, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 6.0, 7.5,
        10.0, 20.0, 30.0, 100.0, 1e30, INF, NAN]
#: log1mexp is defined on x >= 0 (its switch is at log 2)
POS_GRID = [0.0, 1e-30, 1e-7, 1e-3, 0.1, 0.5, 0.6931, 0.6932, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0,
            100.0, 1e30, INF, NAN, -1.0]
#: smooth points for derivatives (away from kinks, where JAX's choice is tested separately)
GRAD_GRID = [-20.0, -6.5, -3.2, -1.7, -0.8, -0.3, 0.0, 0.4, 0.9, 1.6, 2.7, 4.4, 5.6, 8.0,
             25.0]

ELEMENTWISE = ["celu", "elu", "gelu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
               "identity", "leaky_relu", "log_sigmoid", "mish", "relu", "relu6", "selu",
               "sigmoid", "silu", "soft_sign", "softplus", "sparse_plus", "sparse_sigmoid",
               "squareplus", "swish", "tanh"]


def nn_cases(jax, jnp, lax, np):
    """List of (name, fn, args[, traced]); traced=False records the value only."""
    nn = jax.nn
    fdt = np.float64 if jax.config.jax_enable_x64 else np.float32
    rng = np.random.default_rng(20260112)
    grid = np.array(GRID, fdt)
    cases = []

    def add(name, fn, *args, traced=True):
        cases.append((name, fn, args, traced))

    # --- elementwise activations: values on the grid, jaxprs, derivatives, vmap -------------
    smooth = np.array(GRAD_GRID, fdt)
    for name in ELEMENTWISE:
        f = getattr(nn, name)
        add(f"{name}_grid", f, grid, traced=False)
        add(f"{name}_jaxpr", f, np.array([-1.5, 0.0, 2.0], np.float32))
        add(f"{name}_grad_grid", jax.vmap(jax.grad(f)), smooth, traced=False)
        add(f"{name}_grad_jaxpr", jax.grad(f), np.float32(0.7))
    add("gelu_exact_grid", lambda x: nn.gelu(x, approximate=False), grid, traced=False)
    add("gelu_exact_jaxpr", lambda x: nn.gelu(x, approximate=False),
        np.array([-1.5, 0.0, 2.0], np.float32))
    add("gelu_exact_grad_grid", jax.vmap(jax.grad(lambda x: nn.gelu(x, approximate=False))),
        smooth, traced=False)
    add("log1mexp_grid", nn.log1mexp, np.array(POS_GRID, fdt), traced=False)
    add("log1mexp_jaxpr", nn.log1mexp, np.array([0.5, 2.0], np.float32))
    add("log1mexp_grad_grid", jax.vmap(jax.grad(nn.log1mexp)), np.abs(smooth) + 0.05,
        traced=False)
    add("log1mexp_grad_jaxpr", jax.grad(nn.log1mexp), np.float32(0.7))
    # parameters and kinks: JAX's derivative choices at 0 and 6
    add("elu_alpha", lambda x: nn.elu(x, 0.5), grid, traced=False)
    add("celu_alpha", lambda x: nn.celu(x, 2.0), grid, traced=False)
    add("leaky_relu_slope", lambda x: nn.leaky_relu(x, 0.2), grid, traced=False)
    add("squareplus_b", lambda x: nn.squareplus(x, 0.5), grid, traced=False)
    kinks = np.array([-3.0, -1.0, 0.0, 1.0, 3.0, 6.0], fdt)
    for name in ("relu", "relu6", "hard_tanh", "hard_sigmoid", "hard_silu", "leaky_relu",
                 "sparse_plus", "sparse_sigmoid", "elu", "celu"):
        add(f"{name}_grad_kinks", jax.vmap(jax.grad(getattr(nn, name))), kinks, traced=False)
    add("relu_int", nn.relu, np.array([-2, 0, 3], np.int32))
    add("relu_weak_scalar", nn.relu, 2.0)
    add("relu6_bf16", nn.relu6, np.array([-1.0, 3.0, 7.0], np.float32).astype(jnp.bfloat16))
    add("sigmoid_f16", nn.sigmoid, np.array([-1.0, 0.5, 9.0], np.float16))
    add("gelu_int", nn.gelu, np.array([-1, 0, 2], np.int32))
    add("softplus_scalar", nn.softplus, 3.0)
    add("silu_list_error", nn.silu, [1.0, 2.0])
    add("elu_array_alpha", nn.elu, np.array([-1.0, 2.0], np.float32),
        np.array([0.5, 3.0], np.float32))
    add("jvp_relu_zero", lambda x, t: jax.jvp(nn.relu, (x,), (t,)),
        np.array([0.0, 1.0], np.float32), np.ones(2, np.float32))
    add("vmap_relu6", jax.vmap(nn.relu6), np.array([[-1.0, 7.0], [3.0, 6.0]], np.float32))
    add("grad_grad_silu", jax.grad(jax.grad(nn.silu)), np.float32(0.3))
    add("jit_gelu", jax.jit(nn.gelu), np.array([-1.0, 1.0], np.float32))

    # --- glu ---------------------------------------------------------------------------------
    m24 = rng.normal(size=(2, 4)).astype(fdt)
    add("glu", nn.glu, m24)
    add("glu_axis0", lambda x: nn.glu(x, axis=0), m24)
    add("glu_odd_error", nn.glu, rng.normal(size=(2, 3)).astype(np.float32))
    add("grad_glu", jax.grad(lambda x: nn.glu(x).sum()), m24)

    # --- softmax family ----------------------------------------------------------------------
    logits = rng.normal(0, 3, size=(3, 5)).astype(fdt)
    tails = np.array([[1e30, 0.0, -1e30, 2.0, 1.0], [-INF, 1.0, 2.0, -INF, 0.0],
                      [INF, 1.0, 2.0, 3.0, 4.0], [NAN, 1.0, 0.0, 0.0, 0.0],
                      [-INF, -INF, -INF, -INF, -INF], [80.0, 90.0, 100.0, 88.7, 89.0]], fdt)
    mask = np.array([[True, False, True, True, False], [False] * 5, [True] * 5], bool)
    for fname in ("softmax", "log_softmax"):
        f = getattr(nn, fname)
        add(fname, f, logits)
        add(f"{fname}_tails", f, tails)
        add(f"{fname}_axis0", lambda x, f=f: f(x, axis=0), logits)
        add(f"{fname}_axis_none", lambda x, f=f: f(x, axis=None), logits)
        add(f"{fname}_axis_tuple", lambda x, f=f: f(x, axis=(0, 1)), logits)
        add(f"{fname}_where", lambda x, w, f=f: f(x, where=w), logits, mask)
        add(f"{fname}_grad", jax.grad(lambda x, f=f: (f(x) * np.arange(5)).sum()), logits)
        add(f"{fname}_grad_where", jax.grad(lambda x, w, f=f: jnp.where(
            w, f(x, where=w), 0.0).sum() + jnp.where(w, f(x, where=w) ** 2, 0.0).sum()),
            logits, mask)
        add(f"{fname}_vmap", jax.vmap(f), logits)
        add(f"{fname}_int", f, np.array([1, 2, 3], np.int32))
    add("softmax_jvp", lambda x, t: jax.jvp(nn.softmax, (x,), (t,)), logits, logits)

    # --- logsumexp and logmeanexp ------------------------------------------------------------
    b = rng.normal(size=(3, 5)).astype(fdt)
    add("logsumexp", nn.logsumexp, logits)
    add("logsumexp_tails", lambda x: nn.logsumexp(x, axis=1), tails)
    add("logsumexp_axis_keepdims", lambda x: nn.logsumexp(x, axis=0, keepdims=True), logits)
    add("logsumexp_b", lambda x, b: nn.logsumexp(x, axis=1, b=b), logits, b)
    add("logsumexp_b_sign", lambda x, b: nn.logsumexp(x, axis=1, b=b, return_sign=True),
        logits, b)
    add("logsumexp_sign", lambda x: nn.logsumexp(x, return_sign=True), logits)
    add("logsumexp_where", lambda x, w: nn.logsumexp(x, axis=1, where=w), logits, mask)
    add("logsumexp_b_zero", lambda x: nn.logsumexp(x, axis=1, b=np.zeros(5, fdt)), logits)
    add("logsumexp_b_int", lambda x: nn.logsumexp(x, b=2), np.array([1, 2, 3], np.int32))
    add("logsumexp_complex", lambda x: nn.logsumexp(x),
        (logits[0] + 1j * logits[1]).astype(np.complex64))
    add("logsumexp_grad", jax.grad(lambda x: nn.logsumexp(x, axis=1).sum()), logits)
    add("logsumexp_grad_b", jax.grad(lambda x, b: nn.logsumexp(x, b=b, return_sign=True)[0],
                                     (0, 1)), logits, np.abs(b))
    add("logsumexp_vmap", jax.vmap(nn.logsumexp), logits)
    add("logsumexp_axis_error", lambda x: nn.logsumexp(x, axis=2), logits)
    add("logsumexp_dup_axis_error", lambda x: nn.logsumexp(x, axis=(1, -1)), logits)
    add("logmeanexp", nn.logmeanexp, logits)
    add("logmeanexp_axis", lambda x: nn.logmeanexp(x, axis=1, keepdims=True), logits)
    add("logmeanexp_where", lambda x, w: nn.logmeanexp(x, axis=1, where=w), logits, mask)
    add("logmeanexp_grad", jax.grad(lambda x: nn.logmeanexp(x, axis=0).sum()), logits)

    # --- standardize -------------------------------------------------------------------------
    big = (1e4 + rng.normal(size=(3, 5))).astype(fdt)
    add("standardize", nn.standardize, logits)
    add("standardize_stable", lambda x: nn.standardize(x, algorithm="stable"), big)
    add("standardize_fast_big", nn.standardize, big)
    add("standardize_axis0", lambda x: nn.standardize(x, axis=0), logits)
    add("standardize_axis_none", lambda x: nn.standardize(x, axis=None, epsilon=0.1), logits)
    add("standardize_where", lambda x, w: nn.standardize(x, where=w), logits, mask)
    add("standardize_mean_var", lambda x: nn.standardize(x, mean=0.5, variance=2.0), logits)
    add("standardize_int", nn.standardize, np.arange(6, dtype=np.int32).reshape(2, 3))
    add("standardize_grad", jax.grad(lambda x: (nn.standardize(x) * np.arange(5)).sum()),
        logits)
    add("standardize_algorithm_error", lambda x: nn.standardize(x, algorithm="two-pass"),
        logits)
    add("standardize_list_error", lambda x: nn.standardize(x, mean=[0.0]), logits)

    # --- one_hot -----------------------------------------------------------------------------
    idx = np.array([0, 2, -1, 3, 1], np.int32)
    add("one_hot", lambda i: nn.one_hot(i, 3), idx)
    add("one_hot_axis0", lambda i: nn.one_hot(i, 4, axis=0), idx.reshape(5, 1))
    add("one_hot_axis_mid", lambda i: nn.one_hot(i, 4, axis=1), idx[:4].reshape(2, 2))
    add("one_hot_dtype_int", lambda i: nn.one_hot(i, 3, dtype=np.int32), idx)
    add("one_hot_dtype_bool", lambda i: nn.one_hot(i, 3, dtype=bool), idx)
    add("one_hot_bf16", lambda i: nn.one_hot(i, 3, dtype=jnp.bfloat16), idx)
    add("one_hot_uint8", lambda i: nn.one_hot(i, 256), np.array([0, 255, 7], np.uint8))
    add("one_hot_scalar", lambda i: nn.one_hot(i, 3), np.int32(1))
    add("one_hot_zero_classes", lambda i: nn.one_hot(i, 0), idx)
    add("one_hot_axis_error", lambda i: nn.one_hot(i, 3, axis=2), idx)
    add("one_hot_traced_classes_error", lambda n: nn.one_hot(idx, n), 3)
    add("one_hot_float_classes_error", lambda i: nn.one_hot(i, 3.0), idx)
    add("one_hot_vmap", jax.vmap(lambda i: nn.one_hot(i, 3)), idx)
    add("one_hot_named_axis",
        lambda i: jax.vmap(lambda j: nn.one_hot(j, 5, axis="i"), axis_name="i")(i), idx)
    add("one_hot_named_axis_error",
        lambda i: jax.vmap(lambda j: nn.one_hot(j, 3, axis="i"), axis_name="i")(i), idx)

    # --- dot_product_attention ---------------------------------------------------------------
    def qkv(B, T, S, N, K, H, dtype=fdt):
        q = rng.normal(size=(B, T, N, H)).astype(dtype)
        k = rng.normal(size=(B, S, K, H)).astype(dtype)
        v = rng.normal(size=(B, S, K, H)).astype(dtype)
        return q, k, v

    dpa = nn.dot_product_attention
    q, k, v = qkv(2, 4, 5, 2, 2, 3)
    add("dpa", dpa, q, k, v)
    add("dpa_3d", dpa, q[0], k[0], v[0])
    add("dpa_xla", lambda q, k, v: dpa(q, k, v, implementation="xla"), q, k, v)
    add("dpa_scale", lambda q, k, v: dpa(q, k, v, scale=0.3), q, k, v)
    bias = rng.normal(size=(2, 2, 4, 5)).astype(fdt)
    add("dpa_bias", dpa, q, k, v, bias)
    add("dpa_bias_bcast", dpa, q, k, v, bias[:1, :1])
    amask = rng.uniform(size=(2, 1, 4, 5)) < 0.7
    amask[..., 0] = True
    add("dpa_mask", lambda q, k, v, m: dpa(q, k, v, mask=m), q, k, v, amask)
    add("dpa_mask_all_false", lambda q, k, v, m: dpa(q, k, v, mask=m), q, k, v,
        np.zeros((1, 1, 4, 5), bool))
    add("dpa_causal", lambda q, k, v: dpa(q, k, v, is_causal=True), q, k, v)
    add("dpa_window", lambda q, k, v: dpa(q, k, v, local_window_size=1), q, k, v)
    add("dpa_window_pair", lambda q, k, v: dpa(q, k, v, local_window_size=(2, 0)), q, k, v)
    qlen, kvlen = np.array([3, 4], np.int32), np.array([2, 5], np.int32)
    add("dpa_seq_lengths", lambda q, k, v, a, b: dpa(
        q, k, v, query_seq_lengths=a, key_value_seq_lengths=b), q, k, v, qlen, kvlen)
    add("dpa_kv_lengths_causal", lambda q, k, v, b: dpa(
        q, k, v, key_value_seq_lengths=b, is_causal=True), q, k, v, kvlen)
    add("dpa_residual", lambda q, k, v: dpa(q, k, v, return_residual=True), q, k, v)
    add("dpa_residual_3d", lambda q, k, v: dpa(q, k, v, return_residual=True, is_causal=True),
        q[0], k[0], v[0])
    gq, gk, gv = qkv(1, 3, 4, 4, 2, 2)
    add("dpa_gqa", dpa, gq, gk, gv)
    add("dpa_gqa_bias_mask", lambda q, k, v, b, m: dpa(q, k, v, b, m), gq, gk, gv,
        rng.normal(size=(1, 4, 3, 4)).astype(fdt), rng.uniform(size=(1, 4, 3, 4)) < 0.8)
    mq, mk, mv = qkv(1, 3, 3, 3, 1, 2)
    add("dpa_mqa_causal", lambda q, k, v: dpa(q, k, v, is_causal=True), mq, mk, mv)
    bq, bk, bv = (t.astype(jnp.bfloat16) for t in qkv(1, 3, 3, 2, 2, 4, np.float32))
    add("dpa_bf16", dpa, bq, bk, bv)
    hq, hk, hv = (t.astype(np.float16) for t in qkv(1, 2, 3, 1, 1, 4, np.float32))
    add("dpa_f16", dpa, hq, hk, hv)
    add("dpa_grad", jax.grad(lambda q, k, v: (dpa(q, k, v, is_causal=True) ** 2).sum(),
                             (0, 1, 2)), q, k, v)
    add("dpa_vmap", jax.vmap(dpa), q, k, v)
    add("dpa_cudnn_error", lambda q, k, v: dpa(q, k, v, implementation="cudnn"), q, k, v)
    add("dpa_cudnn_window_error", lambda q, k, v: dpa(
        q, k, v, implementation="cudnn", local_window_size=(1, 1)), q, k, v)
    add("dpa_impl_error", lambda q, k, v: dpa(q, k, v, implementation="flash"), q, k, v)
    add("dpa_heads_error", dpa, qkv(1, 2, 2, 3, 2, 2)[0], *qkv(1, 2, 2, 3, 2, 2)[1:])
    add("dpa_value_shape_error", dpa, q, k, v[:, :4])
    add("dpa_query_dtype_error", dpa, q.astype(np.float16), k, v)
    add("dpa_mask_dtype_error", lambda q, k, v: dpa(q, k, v, mask=np.ones((1, 1, 4, 5))),
        q, k, v)
    add("dpa_bias_ndim_error", dpa, q, k, v, np.ones((2, 2, 2, 4, 5), fdt))
    add("dpa_seq_dtype_error", lambda q, k, v: dpa(q, k, v, query_seq_lengths=np.array(
        [1, 2], np.int16)), q, k, v)
    add("dpa_seq_shape_error", lambda q, k, v: dpa(q, k, v, key_value_seq_lengths=np.array(
        [1, 2, 3], np.int32)), q, k, v)

    # --- scaled matmul / dot_general ---------------------------------------------------------
    a3 = np.arange(3.0, dtype=np.float32).reshape(1, 1, 3) + 1
    s1 = np.full((1, 1, 1), 0.5, np.float32)
    add("scaled_matmul", nn.scaled_matmul, a3, a3 + 3, s1, s1)
    add("scaled_matmul_rank_error", nn.scaled_matmul, a3[0], a3, s1, s1)
    add("scaled_matmul_k_error", nn.scaled_matmul, a3, a3[..., :2], s1, s1)
    add("scaled_matmul_scale_k_error", nn.scaled_matmul, a3, a3,
        np.ones((1, 1, 2), np.float32), s1)
    add("scaled_matmul_scale_m_error", nn.scaled_matmul, a3, a3,
        np.ones((1, 2, 1), np.float32), s1)
    e4 = jnp.float8_e4m3fn
    fa = rng.normal(size=(2, 3, 64)).astype(e4)
    fb = rng.normal(size=(2, 4, 64)).astype(e4)
    sa = (2.0 ** rng.integers(-3, 3, size=(2, 3, 2))).astype(jnp.float8_e8m0fnu)
    sb = (2.0 ** rng.integers(-3, 3, size=(2, 4, 2))).astype(jnp.float8_e8m0fnu)
    add("scaled_matmul_mxfp8", nn.scaled_matmul, fa, fb, sa, sb)
    add("scaled_matmul_bf16_out", lambda *a: nn.scaled_matmul(
        *a, preferred_element_type=jnp.bfloat16), fa, fb, sa, sb)
    add("scaled_matmul_vmap", jax.vmap(nn.scaled_matmul), fa[None], fb[None], sa[None],
        sb[None])
    add("scaled_matmul_grad_error", jax.grad(lambda a: nn.scaled_matmul(
        a, a3 + 3, s1, s1).sum()), a3)
    mx = nn.get_scaled_dot_general_config("mxfp8")
    nv = nn.get_scaled_dot_general_config("nvfp4")
    nv_half = nn.get_scaled_dot_general_config("nvfp4", jnp.array([0.5], np.float32))
    lhs = rng.normal(size=(2, 3, 64)).astype(np.float32)
    rhs = rng.normal(size=(2, 5, 64)).astype(np.float32)
    dn = (((2,), (2,)), ((0,), (0,)))
    sdg = nn.scaled_dot_general
    add("scaled_dot_general_mxfp8", lambda l, r: sdg(l, r, dn, configs=[mx] * 3), lhs, rhs)
    add("scaled_dot_general_nvfp4", lambda l, r: sdg(l, r, dn, configs=[nv] * 3), lhs, rhs)
    add("scaled_dot_general_nvfp4_global", lambda l, r: sdg(l, r, dn, configs=[nv_half] * 3),
        lhs, rhs)
    add("scaled_dot_general_none", lambda l, r: sdg(l, r, dn), lhs, rhs)
    add("scaled_dot_general_no_batch", lambda l, r: sdg(l, r, (([1], [0]), ([], [])),
                                                        configs=[mx] * 3),
        lhs[0].T.copy(), rhs[0].T.copy())
    add("scaled_dot_general_bf16_out", lambda l, r: sdg(
        l, r, dn, preferred_element_type=jnp.bfloat16, configs=[mx] * 3), lhs, rhs)
    add("scaled_dot_general_int_out_error", lambda l, r: sdg(
        l, r, dn, preferred_element_type=np.int32, configs=[mx] * 3), lhs, rhs)
    # (the cotangent is quantized too: its kept dimensions must hold whole blocks of 32)
    add("scaled_dot_general_grad", jax.grad(lambda l, r: sdg(l, r, dn, configs=[mx] * 3).sum(),
                                            (0, 1)),
        rng.normal(size=(1, 32, 64)).astype(np.float32),
        rng.normal(size=(1, 32, 64)).astype(np.float32))
    add("scaled_dot_general_grad_nvfp4", jax.grad(
        lambda l, r: sdg(l, r, dn, configs=[nv] * 3).sum(), (0, 1)), lhs, rhs)
    add("get_config_error", lambda: nn.get_scaled_dot_general_config("int4"))
    return cases


def quantize_fn(jax):
    """The module-private quantizer of the library under test: JAX's or pyjax's."""
    if jax.__name__ == "jax":
        from jax._src.cudnn.scaled_matmul_stablehlo import quantize
        return quantize
    from pyjax._src.nn.scaled import _quantize
    return _quantize


def quantize_cases(jax, jnp, np):
    """(name, x, config) for the block quantizer, over ranges reaching its clipping bounds."""
    rng = np.random.default_rng(5)
    xs = {"normal": rng.normal(size=(2, 3, 64)),
          "wide": np.exp(rng.uniform(-30, 30, size=(2, 3, 64))) * rng.choice([-1, 1], (2, 3, 64)),
          "zeros_and_powers": np.concatenate([np.zeros((1, 1, 32)),
                                              2.0 ** np.arange(-16, 16).reshape(1, 1, 32)],
                                             -1)}
    configs = {"mxfp8": jax.nn.get_scaled_dot_general_config("mxfp8"),
               "nvfp4": jax.nn.get_scaled_dot_general_config("nvfp4"),
               "nvfp4_global": jax.nn.get_scaled_dot_general_config(
                   "nvfp4", jnp.array([0.25], np.float32))}
    return [(f"{c}_{x}", xs[x].astype(np.float32), configs[c]) for c in configs for x in xs]


def _bits(np, arr):
    arr = np.asarray(arr)
    return [format(int(b), "x") for b in arr.reshape(-1).view(f"u{arr.dtype.itemsize}")]


def value_of(np, out):
    """An eager result as JSON: nested (dtype, shape, weak type, values) records."""
    if isinstance(out, (tuple, list)):
        return [value_of(np, o) for o in out]
    arr = np.asarray(out)
    if arr.dtype.kind == "c":
        values = np.stack([arr.real, arr.imag], -1).astype(np.float64).tolist()
    elif arr.dtype.kind in "fV" or arr.dtype.name.startswith(("bfloat", "float")):
        values = arr.astype(np.float64).tolist()
    else:
        values = arr.tolist()
    return {"dtype": str(arr.dtype), "shape": list(arr.shape), "values": values,
            "weak_type": bool(getattr(out, "weak_type", False))}


def _record_quantize():
    import jax
    import jax.numpy as jnp
    import numpy as np
    jax.config.update("jax_enable_x64", False)
    quantize = quantize_fn(jax)
    out = []
    for name, x, config in quantize_cases(jax, jnp, np):
        q, s = quantize(jnp.asarray(x), config)
        out.append({"name": name, "q_dtype": str(q.dtype), "s_dtype": str(s.dtype),
                    "q": _bits(np, q), "s": _bits(np, s)})
    return out


def main():
    import json

    import jax
    from jaxpr_recording import _record, record_lines

    def cases(jax, jnp, lax, np):
        return [(n, f, a, t) for n, f, a, t in nn_cases(jax, jnp, lax, np)]

    encode = lambda out, np, jax: value_of(np, out)  # noqa: E731
    records = _record(cases, False, encode) + _record(cases, True, encode)
    with open(OUT, "w") as f:
        f.write('{"jax_version": %s,\n"records": [\n%s\n],\n"quantize": [\n%s\n]}\n' % (
            json.dumps(jax.__version__), record_lines(records),
            record_lines(_record_quantize())))
    print(f"wrote {len(records)} records to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
