"""Record what JAX 0.10.2's `jax.experimental.checkify` returns and raises into
tests/data/checkify.json (read by tests/test_checkify.py).

    /work/oracle/bin/python tests/oracle/record_checkify.py

`checkify_cases(jax, jnp, lax, np, checkify)` -> [(name, thunk)]: the record is `observe` of the
thunk's result (an Error becomes its `get()`, `str()` and exception class; arrays their values
and dtypes), or the class and message of the error it raised.  `checkify_jaxpr_cases(...)` ->
[(name, fn, args)]: make_jaxpr texts, traced with check codes counted from 1.  The test imports both, so the
cases are defined once and run alike under both libraries.  Recorded with x64 off and on.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "checkify.json")


def observe(x, np, checkify):
    """A JSON-able record of a checkify result (Errors, arrays, tuples, lists, dicts)."""
    if isinstance(x, checkify.Error):
        exc = x.get_exception()
        return {"error_get": x.get(), "error_str": str(x),
                "exception": None if exc is None else type(exc).__name__}
    if isinstance(x, (tuple, list)):
        return [observe(v, np, checkify) for v in x]
    if isinstance(x, dict):
        return {str(k): observe(v, np, checkify) for k, v in sorted(x.items())}
    if isinstance(x, (str, bool, type(None))):
        return x
    if isinstance(x, (frozenset, set)):
        return sorted(t.__name__ for t in x)
    a = np.asarray(x)
    value = a.tolist()
    if a.dtype.kind == "f":
        value = [repr(v) for v in a.ravel().tolist()]
    return {"value": value, "dtype": a.dtype.name, "shape": list(a.shape)}


def run_case(thunk, np, checkify):
    try:
        return {"result": observe(thunk(), np, checkify)}
    except Exception as e:  # noqa: BLE001 - recorded
        return {"raised": type(e).__name__, "message": str(e)}


def checkify_cases(jax, jnp, lax, np, checkify):
    """List of (name, thunk)."""
    f32, i32 = np.float32, np.int32
    ck = checkify.checkify
    cases = []

    def add(name, thunk):
        assert name not in {c[0] for c in cases}, name
        cases.append((name, thunk))

    def positive(x):
        checkify.check(x > 0, "x must be positive, got {}", x)
        return x * 2

    def named(x, y):
        checkify.check(jnp.all(x < y), "{x} should be less than {y}", x=x, y=y)
        return x + y

    def two_checks(x):
        checkify.check(x > 1, "first: {}", x)
        checkify.check(x > 2, "second: {}", x)
        return x

    a = jnp.float32(-3.0)
    b = jnp.float32(3.0)
    v3 = jnp.array([1.0, -2.0, 3.0], f32)
    iv = jnp.array([1, 2, 3], i32)

    # user checks
    add("check_fail", lambda: ck(positive)(a))
    add("check_pass", lambda: ck(positive)(b))
    add("check_named_fmt", lambda: ck(named)(jnp.array([1.0, 5.0], f32), jnp.array([2.0, 3.0], f32)))
    add("check_python_bool_false", lambda: ck(lambda x: (checkify.check(False, "always"), x)[1])(b))
    add("check_python_bool_true", lambda: ck(lambda x: (checkify.check(True, "never"), x)[1])(b))
    add("check_no_fmt", lambda: ck(lambda x: (checkify.check(x > 5, "too small"), x)[1])(b))
    add("check_int_fmt", lambda: ck(lambda x: (checkify.check(x > 5, "got {} and {}", x, x * 2),
                                               x)[1])(jnp.int32(4)))
    add("check_array_fmt", lambda: ck(lambda x: (checkify.check(jnp.all(x > 0), "bad {}", x),
                                                 x)[1])(v3))
    add("first_of_two_checks", lambda: ck(two_checks)(jnp.float32(0.0)))
    add("second_of_two_checks", lambda: ck(two_checks)(jnp.float32(1.5)))
    add("throw", lambda: ck(positive)(a)[0].throw())
    add("throw_no_error", lambda: ck(positive)(b)[0].throw())
    add("check_eager_fails", lambda: positive(a))
    add("check_eager_passes", lambda: positive(b))
    add("check_under_jit_unfunctionalized", lambda: jax.jit(positive)(a))
    add("check_under_jit_unfunctionalized_true", lambda: jax.jit(positive)(b))
    add("check_nonscalar_pred", lambda: checkify.check(v3 > 0, "vector"))
    add("check_int_pred", lambda: checkify.check(jnp.int32(1), "int"))
    add("check_python_fmt_arg", lambda: checkify.check(True, "{}", 3))
    add("check_under_grad_unfunctionalized", lambda: jax.grad(positive)(a))
    add("check_under_vmap_unfunctionalized", lambda: jax.vmap(positive)(v3))
    add("error_pytree_leaves", lambda: len(jax.tree_util.tree_leaves(ck(positive)(a)[0])))
    add("init_error", lambda: checkify.init_error)

    # error sets
    add("set_user", lambda: checkify.user_checks)
    add("set_nan", lambda: checkify.nan_checks)
    add("set_div", lambda: checkify.div_checks)
    add("set_index", lambda: checkify.index_checks)
    add("set_float", lambda: checkify.float_checks)
    add("set_automatic", lambda: checkify.automatic_checks)
    add("set_all", lambda: checkify.all_checks)
    add("set_all_minus_user", lambda: checkify.all_checks - checkify.user_checks)
    add("set_user_or_nan", lambda: checkify.user_checks | checkify.nan_checks)

    # NaN checks
    add("nan_sin", lambda: ck(jnp.sin, errors=checkify.nan_checks)(jnp.float32(np.inf)))
    add("nan_log", lambda: ck(jnp.log, errors=checkify.float_checks)(jnp.float32(-1.0)))
    add("nan_log_ok", lambda: ck(jnp.log, errors=checkify.float_checks)(jnp.float32(2.0)))
    add("nan_sqrt_vector", lambda: ck(jnp.sqrt, errors=checkify.nan_checks)(v3))
    add("nan_not_enabled", lambda: ck(jnp.sin)(jnp.float32(np.inf)))
    add("nan_div", lambda: ck(lambda x: x / x, errors=checkify.nan_checks)(jnp.float32(0.0)))
    add("nan_add_inf", lambda: ck(lambda x: x + (-x), errors=checkify.nan_checks)(
        jnp.float32(np.inf)))
    add("nan_input_passthrough", lambda: ck(lambda x: x * 1, errors=checkify.nan_checks)(
        jnp.float32(np.nan)))
    add("nan_input_untouched", lambda: ck(lambda x: -x, errors=checkify.nan_checks)(
        jnp.float32(np.nan)))
    add("nan_dot", lambda: ck(jnp.dot, errors=checkify.nan_checks)(
        jnp.array([np.inf, 1.0], f32), jnp.array([0.0, 1.0], f32)))
    add("nan_reduce_sum", lambda: ck(jnp.sum, errors=checkify.nan_checks)(
        jnp.array([np.inf, -np.inf], f32)))
    add("nan_int_ops", lambda: ck(lambda x: x * x + x, errors=checkify.nan_checks)(iv))
    add("nan_first_of_two", lambda: ck(lambda x: jnp.log(x) + jnp.sin(x * np.inf),
                                       errors=checkify.nan_checks)(jnp.float32(-1.0)))

    # division checks
    add("div_int_zero", lambda: ck(lambda x, y: lax.div(x, y), errors=checkify.div_checks)(
        iv, jnp.array([1, 0, 1], i32)))
    add("div_int_ok", lambda: ck(lambda x, y: lax.div(x, y), errors=checkify.div_checks)(iv, iv))
    add("div_float_zero", lambda: ck(lambda x, y: x / y, errors=checkify.div_checks)(
        jnp.float32(1.0), jnp.float32(0.0)))
    add("floordiv_int_zero", lambda: ck(lambda x, y: x // y, errors=checkify.div_checks)(
        jnp.int32(7), jnp.int32(0)))
    add("rem_int_zero", lambda: ck(lambda x, y: x % y, errors=checkify.div_checks)(
        jnp.int32(7), jnp.int32(0)))
    add("div_and_nan_float_checks", lambda: ck(lambda x: x / x, errors=checkify.float_checks)(
        jnp.float32(0.0)))
    add("div_not_enabled", lambda: ck(lambda x, y: lax.div(x, y))(iv, jnp.zeros(3, i32)))

    # index checks
    add("oob_getitem_dynamic", lambda: ck(lambda x, i: x[i], errors=checkify.index_checks)(
        v3, jnp.int32(5)))
    add("oob_getitem_negative", lambda: ck(lambda x, i: x[i], errors=checkify.index_checks)(
        v3, jnp.int32(-5)))
    add("oob_getitem_ok", lambda: ck(lambda x, i: x[i], errors=checkify.index_checks)(
        v3, jnp.int32(2)))
    add("oob_gather_array", lambda: ck(lambda x, i: x[i], errors=checkify.index_checks)(
        v3, jnp.array([0, 7, 1], i32)))
    add("oob_gather_2d", lambda: ck(lambda x, i, j: x[i, j], errors=checkify.index_checks)(
        jnp.ones((3, 4), f32), jnp.array([1, 2], i32), jnp.array([0, 9], i32)))
    add("oob_take", lambda: ck(lambda x, i: jnp.take(x, i), errors=checkify.index_checks)(
        v3, jnp.array([4], i32)))
    add("oob_dynamic_slice", lambda: ck(lambda x, i: lax.dynamic_slice(x, (i,), (2,)),
                                        errors=checkify.index_checks)(v3, jnp.int32(2)))
    add("oob_dynamic_slice_2d", lambda: ck(lambda x, i: lax.dynamic_slice(x, (1, i), (2, 2)),
                                           errors=checkify.index_checks)(
        jnp.ones((3, 4), f32), jnp.int32(3)))
    add("oob_dynamic_update_slice", lambda: ck(
        lambda x, i: lax.dynamic_update_slice(x, jnp.ones(2, f32), (i,)),
        errors=checkify.index_checks)(v3, jnp.int32(-1)))
    add("oob_scatter_set", lambda: ck(lambda x, i: x.at[i].set(9.0),
                                      errors=checkify.index_checks)(v3, jnp.int32(3)))
    add("oob_scatter_add_array", lambda: ck(lambda x, i: x.at[i].add(1.0),
                                            errors=checkify.index_checks)(
        v3, jnp.array([0, -4], i32)))
    add("oob_scatter_ok", lambda: ck(lambda x, i: x.at[i].mul(2.0),
                                     errors=checkify.index_checks)(v3, jnp.int32(1)))
    add("oob_not_enabled", lambda: ck(lambda x, i: x[i])(v3, jnp.int32(5)))
    add("automatic_checks_mix", lambda: ck(lambda x, i: jnp.log(x[i]),
                                           errors=checkify.automatic_checks)(v3, jnp.int32(1)))
    add("all_checks_user_first", lambda: ck(lambda x: (checkify.check(x > 0, "neg"),
                                                       jnp.log(x))[1],
                                            errors=checkify.all_checks)(jnp.float32(-1.0)))

    # composition with jit
    add("jit_of_checkify_fail", lambda: jax.jit(ck(positive))(a))
    add("jit_of_checkify_pass", lambda: jax.jit(ck(positive))(b))
    add("checkify_of_jit_fail", lambda: ck(jax.jit(positive))(a))
    add("checkify_of_jit_nan", lambda: ck(jax.jit(jnp.log), errors=checkify.nan_checks)(
        jnp.float32(-2.0)))
    add("checkify_of_nested_jit", lambda: ck(jax.jit(lambda x: jax.jit(positive)(x) + 1))(a))
    add("jit_of_checkify_of_jit", lambda: jax.jit(ck(jax.jit(positive)))(a))
    add("jit_checkify_throw", lambda: jax.jit(ck(positive))(a)[0].throw())
    add("jit_pytree_out", lambda: jax.jit(ck(lambda d: {"y": positive(d["x"]), "z": d["x"]}))(
        {"x": a}))

    # composition with vmap
    add("vmap_of_checkify", lambda: jax.vmap(ck(positive))(v3))
    add("vmap_of_checkify_pass", lambda: jax.vmap(ck(positive))(jnp.abs(v3)))
    add("vmap_of_checkify_two_fail", lambda: jax.vmap(ck(positive))(
        jnp.array([-1.0, 2.0, -3.0], f32)))
    add("vmap_of_checkify_nan", lambda: jax.vmap(ck(jnp.log, errors=checkify.nan_checks))(v3))
    add("vmap_of_checkify_throw", lambda: jax.vmap(ck(positive))(v3)[0].throw())
    add("checkify_of_vmap", lambda: ck(jax.vmap(positive))(jnp.array([-1.0, 2.0, -3.0], f32)))
    add("checkify_of_vmap_pass", lambda: ck(jax.vmap(positive))(jnp.abs(v3)))
    add("checkify_of_vmap_nan", lambda: ck(jax.vmap(jnp.log), errors=checkify.nan_checks)(v3))
    add("jit_vmap_checkify", lambda: jax.jit(jax.vmap(ck(positive)))(v3))
    add("vmap_of_checkify_oob", lambda: jax.vmap(ck(lambda i: v3[i], errors=checkify.index_checks))(
        jnp.array([0, 4, 1], i32)))

    # composition with grad
    add("checkify_of_grad_fail", lambda: ck(jax.grad(lambda x: positive(x) ** 2))(a))
    add("checkify_of_grad_pass", lambda: ck(jax.grad(lambda x: positive(x) ** 2))(b))
    add("checkify_of_grad_nan", lambda: ck(jax.grad(lambda x: jnp.sqrt(x) * 0.0),
                                           errors=checkify.nan_checks)(jnp.float32(0.0)))
    add("checkify_of_value_and_grad", lambda: ck(jax.value_and_grad(jnp.log),
                                                 errors=checkify.nan_checks)(jnp.float32(-1.0)))
    add("grad_of_checkify_out", lambda: jax.grad(lambda x: ck(positive)(x)[1])(b))

    # control flow
    def in_cond(x):
        return lax.cond(x > 0, lambda v: positive(v - 10), lambda v: v, x)

    add("cond_branch_fail", lambda: ck(in_cond)(b))
    add("cond_other_branch", lambda: ck(in_cond)(a))
    add("cond_nan_branch", lambda: ck(lambda x: lax.cond(x > 0, jnp.log, jnp.sin, -x),
                                      errors=checkify.nan_checks)(b))
    add("cond_check_both_branches", lambda: ck(lambda x: lax.cond(
        x > 0, lambda v: positive(-v), lambda v: (checkify.check(v > 100, "big {}", v), v)[1],
        x))(a))
    add("switch_fail", lambda: ck(lambda i, x: lax.switch(
        i, [lambda v: v, lambda v: positive(-v), jnp.log], x), errors=checkify.all_checks)(
        jnp.int32(1), b))
    add("switch_nan", lambda: ck(lambda i, x: lax.switch(
        i, [lambda v: v, lambda v: positive(-v), jnp.log], x), errors=checkify.all_checks)(
        jnp.int32(2), a))
    add("jit_cond", lambda: jax.jit(ck(in_cond))(b))

    def while_body_check(x):
        def body(c):
            checkify.check(c < 5, "carry too big: {}", c)
            return c + 1
        return lax.while_loop(lambda c: c < 10, body, x)

    add("while_body_fail", lambda: ck(while_body_check)(jnp.int32(0)))
    add("while_body_pass", lambda: ck(while_body_check)(jnp.int32(10)))

    def while_cond_check(x):
        def cond(c):
            checkify.check(c != 3, "cond saw {}", c)
            return c < 6
        return lax.while_loop(cond, lambda c: c + 1, x)

    add("while_cond_fail", lambda: ck(while_cond_check)(jnp.int32(0)))
    add("while_cond_fail_first", lambda: ck(while_cond_check)(jnp.int32(3)))
    add("while_cond_pass", lambda: ck(while_cond_check)(jnp.int32(4)))
    add("while_nan", lambda: ck(lambda x: lax.while_loop(lambda c: c[0] < 3,
                                                        lambda c: (c[0] + 1, jnp.log(c[1] - 2)),
                                                        (0, x)),
                                errors=checkify.nan_checks)(jnp.float32(3.5)))
    add("fori_loop_fail", lambda: ck(lambda x: lax.fori_loop(
        0, 5, lambda i, c: (checkify.check(i < 3, "i={i}", i=i), c + i)[1], x))(jnp.int32(0)))
    add("fori_loop_dynamic_fail", lambda: ck(lambda n, x: lax.fori_loop(
        0, n, lambda i, c: (checkify.check(c < 4, "c={}", c), c + i)[1], x))(
        jnp.int32(6), jnp.int32(0)))
    add("jit_while", lambda: jax.jit(ck(while_body_check))(jnp.int32(0)))
    add("checkify_of_vmap_while", lambda: ck(jax.vmap(while_body_check))(
        jnp.array([0, 10, 4], i32)))

    def scan_check(xs):
        def body(c, x):
            checkify.check(x > 0, "x={} at carry {}", x, c)
            return c + x, c * x
        return lax.scan(body, jnp.float32(0.0), xs)

    add("scan_fail", lambda: ck(scan_check)(jnp.array([1.0, 2.0, -1.0, -2.0], f32)))
    add("scan_pass", lambda: ck(scan_check)(jnp.array([1.0, 2.0], f32)))
    add("scan_nan", lambda: ck(lambda xs: lax.scan(lambda c, x: (c + jnp.log(x), c), 0.0, xs),
                               errors=checkify.nan_checks)(v3))
    add("scan_reverse", lambda: ck(lambda xs: lax.scan(
        lambda c, x: ((checkify.check(x > 0, "rev {}", x), c + x)[1], x), 0.0, xs,
        reverse=True))(jnp.array([-1.0, 2.0, -3.0], f32)))
    add("jit_scan", lambda: jax.jit(ck(scan_check))(jnp.array([1.0, -2.0], f32)))
    add("vmap_of_checkify_scan", lambda: jax.vmap(ck(scan_check))(
        jnp.array([[1.0, -2.0], [3.0, 4.0]], f32)))
    add("cond_in_scan", lambda: ck(lambda xs: lax.scan(
        lambda c, x: (lax.cond(x > 1, lambda v: positive(v - 5), lambda v: v, x), c), 0.0, xs)[0])(
        jnp.array([0.5, 2.0], f32)))

    # nested checkify, check_error, debug_check
    add("nested_checkify", lambda: ck(ck(positive))(a))
    add("nested_checkify_rethrow", lambda: ck(lambda x: (checkify.check_error(ck(positive)(x)[0]),
                                                         x)[1])(a))
    add("nested_checkify_jit_rethrow", lambda: ck(lambda x: (
        checkify.check_error(jax.jit(ck(positive))(x)[0]), x)[1])(a))
    add("nested_checkify_nan_outer", lambda: ck(lambda x: ck(jnp.log)(x)[1],
                                                errors=checkify.nan_checks)(jnp.float32(-1.0)))
    add("check_error_eager", lambda: checkify.check_error(ck(positive)(a)[0]))
    add("check_error_eager_no_error", lambda: checkify.check_error(ck(positive)(b)[0]))
    add("check_error_not_error", lambda: checkify.check_error("nope"))
    add("check_error_under_jit", lambda: jax.jit(
        lambda x: checkify.check_error(ck(positive)(x)[0]))(a))
    add("check_error_vmapped_eager", lambda: checkify.check_error(jax.vmap(ck(positive))(v3)[0]))
    add("debug_check_outside", lambda: (checkify.debug_check(a > 0, "dbg {}", a), 1)[1])
    add("debug_check_outside_jit", lambda: jax.jit(
        lambda x: (checkify.debug_check(x > 0, "dbg {}", x), x)[1])(a))
    add("debug_check_inside", lambda: ck(lambda x: (checkify.debug_check(x > 0, "dbg {}", x),
                                                    x)[1])(a))
    add("debug_check_nonscalar", lambda: checkify.debug_check(v3 > 0, "dbg"))

    # custom derivatives and remat
    @jax.custom_jvp
    def cj(x):
        checkify.check(x < 10, "cj {}", x)
        return jnp.log(x)

    cj.defjvp(lambda p, t: (cj(p[0]), t[0] / p[0]))

    add("custom_jvp_check", lambda: ck(cj, errors=checkify.all_checks)(jnp.float32(20.0)))
    add("custom_jvp_nan", lambda: ck(cj, errors=checkify.all_checks)(jnp.float32(-1.0)))
    add("custom_jvp_pass", lambda: ck(cj, errors=checkify.all_checks)(jnp.float32(2.0)))
    add("nn_softplus_nan", lambda: ck(jax.nn.softplus, errors=checkify.nan_checks)(
        jnp.float32(np.nan)))
    add("remat_check", lambda: ck(jax.checkpoint(positive))(a))
    add("remat_nan", lambda: ck(jax.checkpoint(jnp.log), errors=checkify.nan_checks)(a))

    @jax.custom_vjp
    def cv(x):
        checkify.check(x < 10, "cv {}", x)
        return jnp.sin(x)

    cv.defvjp(lambda x: (cv(x), jnp.cos(x)), lambda r, g: (g * r,))
    add("custom_vjp_check", lambda: ck(cv)(jnp.float32(20.0)))
    add("custom_vjp_pass", lambda: ck(cv)(jnp.float32(2.0)))

    add("grad_of_checkify_custom_jvp", lambda: jax.grad(lambda x: ck(cj)(x)[1])(
        jnp.float32(2.0)))
    add("grad_of_checkify_custom_vjp", lambda: jax.grad(lambda x: ck(cv)(x)[1])(
        jnp.float32(2.0)))
    add("checkify_of_grad_custom_vjp", lambda: ck(jax.grad(cv))(jnp.float32(20.0)))
    add("vmap_of_checkify_cond", lambda: jax.vmap(ck(in_cond))(jnp.array([3.0, -1.0, 20.0], f32)))
    add("checkify_of_vmap_cond", lambda: ck(jax.vmap(in_cond))(jnp.array([3.0, -1.0, 4.0], f32)))
    add("vmap_of_checkify_scan_nan", lambda: jax.vmap(ck(
        lambda xs: lax.scan(lambda c, x: (c + jnp.log(x), c), 0.0, xs)[0],
        errors=checkify.nan_checks))(jnp.array([[1.0, 2.0], [1.0, -1.0]], f32)))

    # values and structure
    add("pytree_in_out", lambda: ck(lambda d: (d["a"] * 2, [positive(d["b"])]))(
        {"a": iv, "b": a}))
    add("kwargs_call", lambda: ck(lambda x, *, y: positive(x + y))(b, y=jnp.float32(-5.0)))
    add("mixed_dtypes_out", lambda: ck(lambda x: (x.astype(i32), x > 0, positive(x)))(a))
    return cases


def checkify_jaxpr_cases(jax, jnp, lax, np, checkify):
    """List of (name, fn, args); the record is str(jax.make_jaxpr(fn)(*args)), traced with
    check codes counted from 1 (`reset_codes` before each)."""
    f32, i32 = np.float32, np.int32
    ck = checkify.checkify
    x, v = np.float32(1.5), np.array([1.0, 2.0, 3.0], f32)
    cases = []

    def add(name, fn, *args):
        assert name not in {c[0] for c in cases}, name
        cases.append((name, fn, args))

    def positive(x):
        checkify.check(x > 0, "x must be positive, got {}", x)
        return x * 2

    add("unfunctionalized_check", positive, x)
    add("debug_check", lambda x: (checkify.debug_check(x > 0, "d {a}", a=x), x)[1], x)
    add("user_check", ck(positive), x)
    add("two_checks", ck(lambda x: positive(positive(x))), x)
    add("nan_log", ck(jnp.log, errors=checkify.nan_checks), x)
    add("nan_multiple_ops", ck(lambda x: jnp.sin(x) * jnp.exp(x) - x, errors=checkify.nan_checks),
        v)
    add("div_int", ck(lambda a, b: a // b, errors=checkify.float_checks),
        np.array([1, 2], i32), np.array([3, 4], i32))
    add("getitem_index", ck(lambda a, i: a[i], errors=checkify.index_checks), v, i32(1))
    add("gather_array", ck(lambda a, i: a[i], errors=checkify.index_checks), v,
        np.array([0, 2], i32))
    add("scatter_set", ck(lambda a, i: a.at[i].set(0.0), errors=checkify.index_checks), v, i32(1))
    add("dynamic_update_slice", ck(lambda a, i: lax.dynamic_update_slice(a, a[:2], (i,)),
                                   errors=checkify.index_checks), v, i32(1))
    add("jit_inside", ck(jax.jit(positive)), x)
    add("cond", ck(lambda x: lax.cond(x > 0, positive, lambda y: y, x)), x)
    add("cond_nan", ck(lambda x: lax.cond(x > 0, lambda y: jnp.log(y), lambda y: jnp.sin(y), x),
                       errors=checkify.nan_checks), x)
    add("while", ck(lambda x: lax.while_loop(
        lambda c: c < 10.0, lambda c: positive(c) + 1.0, x)), x)
    add("scan", ck(lambda xs: lax.scan(lambda c, a: (c + positive(a), c), 0.0, xs)), v)
    add("vmap_of_checkify", jax.vmap(ck(positive)), v)
    add("checkify_of_vmap", ck(jax.vmap(positive)), v)
    add("checkify_of_grad", ck(jax.grad(lambda x: positive(x) ** 2)), x)
    return cases


# --------------------------------------------------------------------------------------------
# recording
# --------------------------------------------------------------------------------------------

def _worker(path):
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.experimental import checkify
    records = []
    for name, thunk in checkify_cases(jax, jnp, lax, np, checkify):
        records.append({"name": name, **run_case(thunk, np, checkify)})
    import itertools
    from jax._src import checkify as checkify_internals
    jaxprs = []
    for name, fn, args in checkify_jaxpr_cases(jax, jnp, lax, np, checkify):
        checkify_internals.next_code = itertools.count(1).__next__
        jaxprs.append({"name": name, **run_case(lambda: str(jax.make_jaxpr(fn)(*args)), np,
                                                checkify)})
    with open(path, "w") as f:
        json.dump({"x64": bool(jax.config.jax_enable_x64), "records": records,
                   "jaxprs": jaxprs}, f)


def main():
    if len(sys.argv) == 2:
        _worker(sys.argv[1])
        return
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for x64 in ("0", "1"):
            path = os.path.join(tmp, f"checkify_{x64}.json")
            env = dict(os.environ, JAX_ENABLE_X64=x64, JAX_PLATFORMS="cpu",
                       JAX_TRACEBACK_FILTERING="off")
            subprocess.run([sys.executable, os.path.abspath(__file__), path], env=env,
                           check=True, cwd=tmp)
            with open(path) as f:
                data = json.load(f)
            key = "x64" if x64 == "1" else "x32"
            out[key], out[key + "_jaxprs"] = data["records"], data["jaxprs"]
    import jax
    import jaxlib
    with open(OUT, "w") as f:
        json.dump({"jax_version": jax.__version__, "jaxlib_version": jaxlib.__version__,
                   **out}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
