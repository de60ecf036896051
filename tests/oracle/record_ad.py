"""Record JAX's jaxprs of derivatives (grad / jvp / vjp / hessian) into tests/data/ad_jaxprs.json.

    /work/oracle/bin/python tests/oracle/record_ad.py

Needs jax==0.10.2.  Like record.py, the parent starts one worker per x64 setting (each checks
the flag took effect) and writes ``{"jax_version", "jaxlib_version", "records"}`` with one
record ``{"name", "x64", "jaxpr"}`` (or ``"error"``) per case, keys sorted, one per line.

``ad_cases(jax, jnp, lax, np, x64=False)`` is imported by tests/test_autodiff_rules.py too, so
this module never imports jax at top level: the cases receive the modules as arguments.
Arguments are NumPy arrays with explicit dtypes.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "ad_jaxprs.json")

UNARY = ("exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "tan", "asin",
         "acos", "atan", "sinh", "cosh", "asinh", "atanh", "sqrt", "rsqrt", "cbrt", "abs",
         "square", "erf", "erfc", "erf_inv", "lgamma", "digamma", "sign", "floor", "ceil", "neg")
BINARY = ("add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2")
DOTS = (("matmul", (((1,), (0,)), ((), ())), (2, 3), (3, 4)),
        ("batch", (((2,), (1,)), ((0,), (0,))), (2, 3, 4), (2, 4, 5)),
        ("batch_middle", (((0,), (2,)), ((1,), (0,))), (3, 2, 4), (2, 5, 3)),
        ("outer", (((), ()), ((), ())), (3,), (2,)),
        ("contract_first", (((0,), (0,)), ((), ())), (3, 2), (3, 4)))


def ad_cases(jax, jnp, lax, np, x64=False):
    """List of (name, fn, args); the record is str(jax.make_jaxpr(fn)(*args))."""
    if x64:
        return _cases_x64(jax, jnp, lax, np)
    f32 = np.float32
    x = np.array([0.3, 0.6, 0.2], f32)
    y = np.array([0.5, 0.25, 0.4], f32)
    s = np.array(0.4, f32)
    m23 = np.arange(6, dtype=f32).reshape(2, 3)
    zc = np.array([0.3 + 0.2j, 0.6 - 0.1j], np.complex64)
    grad = jax.grad
    cases = []

    def add(name, fn, *args):
        assert name not in {c[0] for c in cases}, name
        cases.append((name, fn, args))

    # the functions the autodiff issue names
    add("grad_tanh", grad(lambda a: jnp.tanh(a)), np.array(0.7, f32))
    add("grad_sin", grad(lambda a: jnp.sin(a) * a), np.array(0.7, f32))
    add("grad_mul", grad(lambda a, b: a * b), np.array(0.7, f32), np.array(0.7, f32))
    add("grad_dot", grad(lambda w, v: jnp.dot(v, w).sum()), np.ones((3, 4), f32),
        np.ones((2, 3), f32))
    add("grad_sum", grad(lambda v: jnp.sum(v)), m23)
    add("grad_where", grad(lambda v: jnp.where(v > 1, v, 0.0).sum()), m23)
    add("jvp_where", lambda v, t: jax.jvp(lambda v: jnp.where(v > 1, v, 0.0).sum(), (v,), (t,)),
        m23, m23)
    add("grad_logistic", grad(lambda a: lax.logistic(a)), np.array(0.7, f32))
    add("grad_sqrt", grad(lambda a: jnp.sqrt(a)), np.array(0.7, f32))
    add("grad_max", grad(lambda v: jnp.max(v)), m23)
    add("grad_maximum_zero", grad(lambda a: jnp.maximum(a, 0.0)), np.array(0.7, f32))

    # every unary rule, every binary rule (both operands; a rank-0 operand; jvps)
    for name in UNARY:
        add("grad_lax_" + name, grad(lambda a, fn=getattr(lax, name): fn(a).sum()), x)
    add("grad_lax_acosh", grad(lambda a: lax.acosh(a).sum()), x + 1)
    add("grad_lax_round", grad(lambda a: lax.round(a).sum()), x)
    for name in BINARY:
        fn = getattr(lax, name)
        add("grad_lax_" + name, grad(lambda a, b, fn=fn: fn(a, b).sum(), (0, 1)), x, y)
        add("grad_lax_" + name + "_scalar_rhs", grad(lambda a, b, fn=fn: fn(a, b).sum(), (0, 1)),
            x, s)
        add("jvp_" + name, lambda a, b, t, fn=fn: jax.jvp(fn, (a, b), (t, t)), x, y, x)
        add("jvp_" + name + "_lhs",
            lambda a, b, t, fn=fn: jax.jvp(lambda a: fn(a, b), (a,), (t,)), x, y, x)
        add("jvp_" + name + "_rhs_scalar",
            lambda a, b, t, fn=fn: jax.jvp(lambda b: fn(a, b), (b,), (t,)), x, s, s)
    for k in (1, 2, 3, -1, -2):
        add(f"grad_integer_pow_{k}".replace("-", "neg"),
            grad(lambda a, k=k: lax.integer_pow(a, k).sum()), x)
    add("grad_clamp", grad(lambda lo, a, hi: lax.clamp(lo, a, hi).sum(), (0, 1, 2)),
        x - 0.1, x, x + 0.1)
    add("grad_clamp_scalar_bounds", grad(lambda a: lax.clamp(f32(0.25), a, f32(0.5)).sum()), x)
    add("grad_convert_roundtrip",
        grad(lambda a: lax.convert_element_type(lax.convert_element_type(a, np.float16),
                                                np.float32).sum()), x)
    add("grad_real", grad(lambda a: lax.real(a * zc).sum()), zc.real.copy())
    add("grad_imag_complex", grad(lambda a: lax.imag(lax.complex(a, a * 2)).sum()), x[:2])
    add("grad_conj", grad(lambda a: lax.real(lax.conj(a) * zc).sum()), x[:2])
    add("grad_abs_complex", grad(lambda a: lax.abs(lax.complex(a, a)).sum()), x)
    add("grad_select_n", grad(lambda a, b: lax.select_n(a > 0.35, a, b).sum(), (0, 1)), x, y)
    for name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
        fn = getattr(lax, name)
        add("grad_" + name + "_axis1", grad(lambda a, fn=fn: fn(a, (1,)).sum()), m23)
        add("grad_" + name + "_all", grad(lambda a, fn=fn: fn(a, (0, 1))), m23)
    add("grad_reduce_prod_odd", grad(lambda a: lax.reduce_prod(a, (0,))),
        np.arange(1, 6, dtype=f32))
    for tag, dims, sa, sb in DOTS:
        add("grad_dot_general_" + tag,
            grad(lambda a, b, d=dims: lax.dot_general(a, b, d).sum(), (0, 1)),
            np.ones(sa, f32), np.ones(sb, f32))
    add("grad_dot_general_preferred",
        grad(lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                          preferred_element_type=np.float32).sum(), (0, 1)),
        np.ones((2, 3), np.float16), np.ones((3, 4), np.float16))
    add("vjp_exp", lambda a, t: jax.vjp(jnp.exp, a)[1](t), x, y)

    # symbolic zeros, implicit broadcasting, identity transposes, folded constants
    r13 = np.arange(3, dtype=f32).reshape(1, 3) + 0.5
    m23h = m23 + 0.5
    add("grad_add_const", grad(lambda a: (a + 1.0).sum()), x)
    add("grad_rsub_const", grad(lambda a: (2.0 - a).sum()), x)
    for name in ("add", "mul", "div"):
        add(f"grad_lax_{name}_size1_axis", grad(
            lambda a, b, fn=getattr(lax, name): fn(a, b).sum(), (0, 1)), r13, m23h)
    add("grad_lax_sub_rank0_lhs", grad(lambda a, b: lax.sub(a, b).sum(), (0, 1)), f32(1.5),
        m23h)
    add("jvp_add_size1_axis", lambda a, t: jax.jvp(lambda a: lax.add(a, m23h), (a,), (t,)),
        r13, r13)
    add("jvp_rsub_size1_axis", lambda a, t: jax.jvp(lambda a: lax.sub(m23h, a), (a,), (t,)),
        r13, r13)
    add("jvp_rem_size1_axis", lambda a, t: jax.jvp(lambda a: lax.rem(a, m23h), (a,), (t,)),
        r13, r13)
    add("grad_reduce_sum_no_axes", grad(lambda a: lax.reduce_sum(a, ()).sum()), m23h)
    add("grad_reduce_max_no_axes", grad(lambda a: lax.reduce_max(a, ()).sum()), m23h)
    add("grad_reduce_prod_2d", grad(lambda a: lax.reduce_prod(a, (0, 1))), m23h)
    add("jvp_reduce_prod_axis1",
        lambda a, t: jax.jvp(lambda a: lax.reduce_prod(a, (1,)), (a,), (t,)), m23h, m23h)
    add("jvp_convert_float16",
        lambda a, t: jax.jvp(lambda a: lax.convert_element_type(a, np.float16), (a,), (t,)),
        x, x)
    add("grad_weak_scalar_tanh", grad(lambda a: lax.tanh(a)), 0.5)
    add("grad_weak_scalar_sqrt", grad(lambda a: lax.sqrt(a) * 2), 0.5)

    # jnp functions
    add("grad_jnp_mix", grad(lambda a: jnp.sum(jnp.exp(a) * jnp.sin(a) / (1 + a ** 2))), x)
    add("grad_jnp_norm", grad(lambda a: jnp.sqrt(jnp.sum(a * a))), x)
    add("grad_jnp_softmax_sum", grad(lambda a: jnp.sum(jnp.exp(a) / jnp.sum(jnp.exp(a)))), x)
    add("grad_jnp_matmul", grad(lambda a, b: (a @ b).sum(), (0, 1)), m23h, m23h.T.copy())
    add("grad_jnp_clip", grad(lambda a: jnp.clip(a, 0.25, 0.5).sum()), x)
    add("grad_jnp_abs", grad(lambda a: jnp.abs(a).sum()), x)
    add("grad_jnp_cube", grad(lambda a: (a ** 3).sum()), x)
    add("grad_jnp_power", grad(lambda a, b: jnp.power(a, b).sum(), (0, 1)), x, y)
    add("grad_jnp_mean", grad(lambda a: jnp.mean(a)), m23h)
    add("grad_jnp_max_axis", grad(lambda a: jnp.max(a, axis=1).sum()), m23h)
    add("grad_jnp_prod", grad(lambda a: jnp.prod(a)), x)
    add("grad_jnp_astype_half",
        grad(lambda a: a.astype(jnp.float16).sum().astype(jnp.float32)), x)
    add("grad_jnp_real", grad(lambda a: jnp.real(a * (1 + 2j)).sum()), x)
    add("grad_grad_tanh", grad(grad(lambda a: lax.tanh(a))), s)
    add("grad_grad_sin_mul", grad(grad(lambda a: lax.sin(a) * a)), s)
    add("grad_grad_logistic", grad(grad(lambda a: lax.logistic(a))), s)

    # jacobians: one vmapped jvp/vjp over the standard basis, then unravelled
    add("jacfwd_vec", jax.jacfwd(lambda a: jnp.sin(a) * a[0]), x)
    add("jacrev_vec", jax.jacrev(lambda a: jnp.sin(a) * a[0]), x)
    add("jacfwd_matrix_in", jax.jacfwd(lambda m: jnp.tanh(m) @ x), m23)
    add("jacrev_matrix_in", jax.jacrev(lambda m: jnp.tanh(m) @ x), m23)
    add("jacfwd_scalar_in", jax.jacfwd(lambda a: a * x), s)
    add("jacrev_scalar_out", jax.jacrev(lambda a: jnp.sum(a ** 2)), x)
    add("jacfwd_argnums", jax.jacfwd(lambda a, b: a * b, (0, 1)), x, s)
    add("jacrev_argnums", jax.jacrev(lambda a, b: a * b, (0, 1)), x, s)
    add("jacrev_pytree_out", jax.jacrev(lambda a: {"s": jnp.sum(a), "v": a * 2}), x)
    add("jacfwd_pytree_in", jax.jacfwd(lambda d: d["a"] * d["b"][0]), {"a": x, "b": (s,)})
    add("jacfwd_has_aux", jax.jacfwd(lambda a: (jnp.exp(a), a.sum()), has_aux=True), x)
    add("jacrev_has_aux", jax.jacrev(lambda a: (jnp.exp(a), a.sum()), has_aux=True), x)
    add("jacfwd_weak_scalar", jax.jacfwd(lambda a: a * 2.0), 0.5)
    add("hessian_cube", jax.hessian(lambda a: jnp.sum(a ** 3)), x)
    add("hessian_two_args", jax.hessian(lambda a, b: jnp.sum(a * b * b), (0, 1)), x, y)
    # linearize of a jit call: its known call returns neither an input it returns as it is,
    # nor a residual that is one of its outputs (JAX's forwarding)
    pair = jax.jit(lambda a: (a, jnp.sin(a) * a))
    add("grad_jit_forwarded_output", grad(lambda a: pair(a)[0] * pair(a)[1]), s)
    add("linearize_jit_forwarded_output",
        lambda a: jax.linearize(pair, a)[1](a), s)
    return cases


def _cases_x64(jax, jnp, lax, np):
    f64 = np.float64
    m23 = np.arange(6, dtype=f64).reshape(2, 3)
    grad = jax.grad
    return [
        ("x64_grad_tanh", grad(lambda a: jnp.tanh(a)), (np.array(0.7, f64),)),
        ("x64_grad_dot", grad(lambda w, v: jnp.dot(v, w).sum()),
         (np.ones((3, 4), f64), np.ones((2, 3), f64))),
        ("x64_grad_sum", grad(lambda v: jnp.sum(v)), (m23,)),
        ("x64_grad_max", grad(lambda v: jnp.max(v)), (m23,)),
        ("x64_grad_sqrt", grad(lambda a: jnp.sqrt(a)), (np.array(0.7, f64),)),
        ("x64_grad_pow", grad(lambda a, b: lax.pow(a, b).sum(), (0, 1)),
         (np.array([0.5, 1.5], f64), np.array([2.5, -0.5], f64))),
    ]


# --------------------------------------------------------------------------------------------
# recording
# --------------------------------------------------------------------------------------------

def _worker(x64, path):
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax import lax
    if bool(jax.config.jax_enable_x64) != x64:
        raise SystemExit(f"JAX_ENABLE_X64 did not take effect (wanted {x64})")
    records = []
    for name, fn, args in ad_cases(jax, jnp, lax, np, x64=x64):
        record = {"name": name, "x64": x64}
        try:
            record["jaxpr"] = str(jax.make_jaxpr(fn)(*args))
        except Exception as e:  # noqa: BLE001 - recorded
            record["error"] = {"type": type(e).__name__, "message": str(e)}
        records.append(record)
    with open(path, "w") as f:
        json.dump({"jax_version": jax.__version__,
                   "jaxlib_version": __import__("jaxlib").__version__,
                   "records": records}, f)


def main():
    if len(sys.argv) == 3 and sys.argv[1] in ("0", "1"):
        _worker(sys.argv[1] == "1", sys.argv[2])
        return
    records, versions = [], None
    with tempfile.TemporaryDirectory() as tmp:
        for flag in ("0", "1"):
            path = os.path.join(tmp, f"ad{flag}.json")
            env = dict(os.environ, JAX_ENABLE_X64=flag, JAX_PLATFORMS="cpu")
            subprocess.run([sys.executable, os.path.abspath(__file__), flag, path], env=env,
                           check=True, cwd=tmp)
            with open(path) as f:
                data = json.load(f)
            versions = (data["jax_version"], data["jaxlib_version"])
            records += data["records"]
    lines = ",\n".join(json.dumps(r, sort_keys=True) for r in records)
    with open(OUT, "w") as f:
        f.write(f'{{"jax_version": "{versions[0]}", "jaxlib_version": "{versions[1]}", '
                f'"records": [\n{lines}\n]}}\n')
    print(f"wrote {len(records)} records to {OUT}")


if __name__ == "__main__":
    main()
