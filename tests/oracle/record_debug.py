"""Record what JAX 0.10.2 prints for jax.debug and the host callbacks into
tests/data/debug.json (read by tests/test_debug_callbacks.py).

    PYTHONPATH=/path/to/rich /work/oracle/bin/python tests/oracle/record_debug.py

(`rich` on the path adds the visualize_* drawings, `rich_programs`; without it they are left
out, and the test skips them where rich is not installed.)

`debug_programs(jax, jnp, lax, np)` -> [(name, thunk)]: the record is everything the thunk
writes to stdout (prints, callbacks, logging through a handler made inside the thunk, debugger
sessions), then its return value's repr or the error it raised.  `debug_jaxprs(...)` ->
[(name, fn, args)]: make_jaxpr texts.  The test imports both lists, so the callbacks are defined
here, in one place, and print the same qualified names and source lines under both libraries.
Programs run with x64 off, then on.
"""
import contextlib
import io
import json
import logging
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "debug.json")


def error_text(e):
    """An error as recorded: class and message; a failed host callback keeps its status line
    and the final exception line (the traceback between names each library's own frames)."""
    msg = str(e)
    if type(e).__name__ == "JaxRuntimeError" and "\n" in msg:
        lines = msg.split("\n")
        msg = lines[0] + " ... " + lines[-1]
    return f"{type(e).__name__}: {msg}"


@contextlib.contextmanager
def rich_hidden():
    """As if `rich` were not installed: both libraries ask importlib.util.find_spec."""
    import importlib.util
    find_spec = importlib.util.find_spec
    importlib.util.find_spec = lambda name, *a: None if name == "rich" else find_spec(name, *a)
    try:
        yield
    finally:
        importlib.util.find_spec = find_spec


def has_rich():
    import importlib.util
    return importlib.util.find_spec("rich") is not None


def run_captured(thunk):
    """stdout of `thunk()` followed by `-> repr(result)` or `!! error` (paths of this folder
    made relative)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            out = thunk()
            result = "-> " + repr(out)
        except Exception as e:  # noqa: BLE001 - the error is part of the record
            result = "!! " + error_text(e)
    # the debugger names this file's frames: keep paths relative to this folder
    return (buf.getvalue() + result).replace(HERE + os.sep, "")


def _stdout_logging(logger_name):
    """A handler on JAX's debugging logger that writes the record's base file name, line and
    message to the (redirected) stdout; returns the function that removes it."""
    logger = logging.getLogger(logger_name)
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(name)s|%(levelname)s|%(filename)s|%(lineno)d|"
                                           "%(message)s"))
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)

    def remove():
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    return remove


def debug_programs(jax, jnp, lax, np):
    from functools import partial
    experimental = __import__(jax.__name__ + ".experimental", fromlist=["io_callback"])
    io_callback = experimental.io_callback
    dprint = jax.debug.print
    oprint = jax.debug.print(ordered=True)
    f32 = jax.ShapeDtypeStruct((), jnp.float32)
    x3 = jnp.arange(3.)
    m23 = jnp.arange(6.).reshape(2, 3)
    progs = []

    def add(name, thunk):
        assert name not in {p[0] for p in progs}, name
        progs.append((name, thunk))

    # -- print: formatting --------------------------------------------------------------------
    def formats():
        dprint("x={}", x3)
        dprint("x={x} y={y}", x=jnp.float32(1.5), y=2)
        dprint("{:.3f} {x:>8}", 3.14159, x=jnp.float32(2.5))
        dprint("static {} {s} {}", "str", jnp.int32(3), s=None)
        dprint("{}", (jnp.ones(2), {"a": 1}))
        dprint("{0} {0} {1}", 1, True)
        dprint("{}", jnp.bool_(True))
        dprint("{}", np.float64(0.1))
        dprint("{}", jnp.arange(4, dtype=jnp.int8).reshape(2, 2))
        dprint("{}", jnp.array([1.5, 2.5], jnp.bfloat16))
        dprint("{}", jnp.array([1 + 2j]))
        dprint("no placeholders")
        dprint("no placeholders", 1, 2.5, skip_format_check=True)
        dprint("{{literal}} {}", 7, skip_format_check=True)
        dprint("")
        dprint(ordered=True)("two-call {}", 4)
        with np.printoptions(precision=2, suppress=True):
            dprint("{}", jnp.array([1.23456, 2e-9]))
            jax.jit(lambda v: dprint("jit {}", v))(jnp.array([1.23456, 2e-9]))
        dprint("{}", jnp.array([1.23456, 2e-9]))
        dprint("{}", jnp.arange(2000.))
    add("print_formats", formats)
    for name, fmt, args, kw in [
            ("print_missing_positional", "{} {}", (1,), {}),
            ("print_unused_positional", "{}", (1, 2), {}),
            ("print_unused_keyword", "{x}", (), {"x": 1, "y": 2}),
            ("print_unused_no_placeholder", "no placeholder", (1, 2.5), {}),
            ("print_bad_format", "{", (1,), {}),
            ("print_missing_keyword", "{x}", (), {})]:
        add(name, partial(dprint, fmt, *args, **kw))
    add("print_two_call_extra", lambda: jax.debug.print(ordered=True, x=1))
    add("callback_two_call_extra", lambda: jax.debug.callback(ordered=True, x=1))
    add("callback_not_callable", lambda: jax.debug.callback(3, 1))

    # -- print under transformations ----------------------------------------------------------
    def body_fn(x):
        oprint("start {}", x)

        def step(c, xi):
            oprint("c={c} xi={xi}", c=c, xi=xi)
            return c + xi, c * xi
        c, ys = lax.scan(step, 0., x)

        def wbody(i):
            oprint("i={}", i)
            return i + 1
        lax.while_loop(lambda i: i < 2, wbody, 0)
        lax.fori_loop(0, 2, lambda i, a: (oprint("fori {} {}", i, a), a + i)[1], 1.)
        lax.cond(c > 1, lambda: oprint("big {}", c), lambda: oprint("small {}", c))
        return ys.sum()
    add("print_eager_control_flow", lambda: body_fn(x3))

    def jit_twice():
        jf = jax.jit(body_fn)
        jf(x3)
        return jf(x3 + 1)
    add("print_jit_control_flow", jit_twice)
    add("print_grad", lambda: jax.grad(body_fn)(x3))
    add("print_jit_grad", lambda: jax.jit(jax.grad(body_fn))(x3))
    add("print_value_and_grad", lambda: jax.value_and_grad(body_fn)(x3))
    add("print_jvp", lambda: jax.jvp(body_fn, (x3,), (x3,)))
    add("print_vjp", lambda: jax.vjp(body_fn, x3)[1](jnp.float32(1.)))
    add("print_linearize", lambda: jax.linearize(body_fn, x3)[1](x3))
    add("print_vmap_control_flow", lambda: jax.vmap(body_fn)(m23))
    add("print_jit_vmap", lambda: jax.jit(jax.vmap(body_fn))(m23))
    add("print_vmap_grad", lambda: jax.vmap(jax.grad(body_fn))(m23))

    def two_args(a, b):
        oprint("a={} b={}", a, b)
        return a * b
    add("print_vmap_in_axes", lambda: jax.vmap(two_args, in_axes=(1, None))(m23, 5.))
    add("print_vmap_nested", lambda: jax.vmap(jax.vmap(two_args))(m23, m23))
    add("print_vmap_unbatched", lambda: jax.vmap(lambda a: two_args(a, 2.), in_axes=0)(x3))
    add("print_vmap_no_batched_operand",
        lambda: jax.vmap(lambda a: (oprint("const {}", 1.), a)[1])(x3))

    def dead_print(x):
        dprint("never used {}", x * 2)
        return x + 1
    add("print_result_unused_jit", lambda: jax.jit(dead_print)(1.))
    add("print_inner_jit_no_outputs",
        lambda: jax.jit(lambda v: (jax.jit(lambda w: oprint("inner {}", w))(v), v)[1])(2.))
    add("print_checkpoint", lambda: jax.grad(jax.checkpoint(
        lambda v: (oprint("remat {}", v), jnp.sin(v) * 2)[1]))(1.))

    def cj(v):
        return v * 3
    cj = jax.custom_jvp(cj)

    @cj.defjvp
    def cj_jvp(primals, tangents):
        oprint("custom jvp rule {}", primals[0])
        return cj(primals[0]), tangents[0] * 3
    add("print_custom_jvp_rule", lambda: jax.grad(cj)(2.))

    # -- debug.log ----------------------------------------------------------------------------
    def logged():
        remove = _stdout_logging("jax._src.debugging")
        try:
            jax.debug.log("log {}", jnp.float32(1.))
            jax.jit(lambda v: jax.debug.log("log jit {}", v))(2.)
            jax.vmap(lambda v: jax.debug.log("log vmap {x}", x=v))(x3)
        finally:
            remove()
    add("log", logged)

    # -- debug.callback ----------------------------------------------------------------------
    def show(*args, **kwargs):
        print("show", args, kwargs)
    add("callback_eager", lambda: jax.debug.callback(show, 1., np.float64(2.), x3, k="s",
                                                     z=jnp.int32(4)))
    add("callback_jit", lambda: jax.jit(lambda v: jax.debug.callback(show, v, 1., k=v))(x3))
    add("callback_no_args_jit", lambda: jax.jit(lambda: jax.debug.callback(
        lambda: print("no args")))())
    add("callback_vmap", lambda: jax.vmap(lambda v: jax.debug.callback(show, v, 7.))(m23))
    add("callback_grad", lambda: jax.grad(lambda v: (jax.debug.callback(show, v), v * v)[1])(
        3.))
    add("callback_two_call", lambda: jax.debug.callback(ordered=True)(show, 1, b=x3))

    def bad(v):
        raise KeyError("boom")
    add("callback_raises_eager", lambda: jax.debug.callback(bad, 1.))
    add("callback_raises_jit", lambda: jax.jit(lambda v: jax.debug.callback(bad, v))(1.))

    # -- pure_callback -----------------------------------------------------------------------
    def cb_add(x, y):
        print("cb_add", jnp.shape(x), jnp.shape(y), type(x).__name__, x.dtype)
        return x + y

    def fun(x, y, *, vmap_method):
        shape = jnp.broadcast_shapes(jnp.shape(x), jnp.shape(y))
        out_type = jax.ShapeDtypeStruct(shape, jnp.result_type(x, y))
        return jax.pure_callback(cb_add, out_type, x, y, vmap_method=vmap_method)
    for method in ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                   "legacy_vectorized", None]:
        add(f"pure_vmap_{method}",
            partial(jax.vmap(partial(fun, vmap_method=method), in_axes=(0, None)), x3, 1.))
        add(f"pure_jit_vmap_both_{method}",
            partial(jax.jit(jax.vmap(partial(fun, vmap_method=method))), m23, m23 * 2))
    add("pure_vmap_in_axes_1", lambda: jax.vmap(partial(fun, vmap_method="expand_dims"),
                                                in_axes=(1, 0))(m23, x3))
    add("pure_eager", lambda: fun(x3, 2., vmap_method=None))
    add("pure_jit", lambda: jax.jit(partial(fun, vmap_method=None))(x3, 2.))

    def tree_cb(d, scale=1):
        print("tree_cb", sorted(d), type(d["a"]).__name__, scale)
        return {"sum": d["a"] + d["b"], "pair": (d["a"] * scale, np.int32(3))}
    tree_out = {"sum": jax.ShapeDtypeStruct((3,), jnp.float32),
                "pair": (jax.ShapeDtypeStruct((3,), jnp.float32),
                         jax.ShapeDtypeStruct((), jnp.int32))}
    add("pure_pytrees", lambda: jax.jit(lambda a: jax.pure_callback(
        tree_cb, tree_out, {"a": a, "b": a}, scale=2))(x3))
    add("pure_result_unused_jit", lambda: jax.jit(lambda v: (jax.pure_callback(
        lambda w: (print("pure ran"), w)[1], f32, v), v + 1)[1])(1.))
    add("pure_grad", lambda: jax.grad(lambda v: jax.pure_callback(lambda w: w, f32, v))(1.))
    add("pure_grad_of_constant", lambda: jax.grad(lambda v: jax.pure_callback(
        lambda: np.float32(2.), f32) * v)(1.))

    sin_cb = jax.custom_jvp(lambda v: jax.pure_callback(
        lambda w: (print("host sin", w), np.sin(w))[1], jax.ShapeDtypeStruct(v.shape, v.dtype),
        v, vmap_method="sequential"))
    sin_cb.defjvp(lambda p, t: (sin_cb(p[0]), jax.pure_callback(
        lambda w: np.cos(w), jax.ShapeDtypeStruct(p[0].shape, p[0].dtype), p[0],
        vmap_method="expand_dims") * t[0]))
    add("pure_custom_jvp_grad", lambda: jax.grad(sin_cb)(jnp.float32(0.5)))
    add("pure_custom_jvp_vmap_grad", lambda: jax.vmap(jax.grad(sin_cb))(jnp.array([0., .5])))
    add("pure_bad_vmap_method", lambda: jax.pure_callback(cb_add, f32, 1., 2.,
                                                          vmap_method="foo"))
    add("pure_64bit_result", lambda: jax.pure_callback(
        cb_add, jax.ShapeDtypeStruct((), jnp.float64), 1., 2.))
    for name, bad_cb in [("shape", lambda v: np.zeros(3, np.float32)),
                         ("dtype", lambda v: np.zeros((), np.int32)),
                         ("count", lambda v: (v, v)),
                         ("python_float", lambda v: 1.0),
                         ("float64", lambda v: np.float64(2.))]:
        add(f"pure_bad_{name}", partial(jax.pure_callback, bad_cb, f32, 1.))
        add(f"pure_bad_{name}_jit", partial(jax.jit(lambda v, c=bad_cb: jax.pure_callback(
            c, f32, v)), 1.))
    add("pure_raises", lambda: jax.pure_callback(lambda v: 1 / 0, f32, 1.))

    # -- io_callback -------------------------------------------------------------------------
    def io_fn(v):
        print("io", v)
        return v * 2
    add("io_eager", lambda: io_callback(io_fn, f32, 1.))
    add("io_jit_result_unused", lambda: jax.jit(lambda v: (io_callback(io_fn, f32, v),
                                                           v + 1)[1])(1.))
    add("io_jit_ordered", lambda: jax.jit(lambda v: [io_callback(io_fn, f32, v + i, ordered=True)
                                                     for i in range(3)])(1.))
    add("io_vmap", lambda: jax.vmap(lambda v: io_callback(io_fn, f32, v))(x3))
    add("io_vmap_ordered", lambda: jax.vmap(lambda v: io_callback(io_fn, f32, v,
                                                                  ordered=True))(x3))
    add("io_grad", lambda: jax.grad(lambda v: io_callback(io_fn, f32, v))(1.))
    add("io_scan", lambda: lax.scan(lambda c, v: (c + io_callback(io_fn, f32, v, ordered=True),
                                                  None), 0., x3))

    # -- sharding ----------------------------------------------------------------------------
    def inspect_all():
        jax.debug.inspect_array_sharding(x3, callback=print)
        jax.debug.inspect_array_sharding({"a": x3, "b": jnp.float32(1)}, callback=print)

        def f(v):
            jax.debug.inspect_array_sharding(v, callback=lambda s: print("in jit", s))
            return v * 2
        jf = jax.jit(f)
        print("call 1")
        jf(x3)
        print("call 2")
        jf(x3)
        jax.vmap(f)(m23)
        jax.grad(lambda v: f(v).sum())(x3)
    add("inspect_sharding", inspect_all)
    def no_rich(thunk):
        def run():
            with rich_hidden():
                return thunk()
        return run
    add("visualize_array_sharding", no_rich(lambda: jax.debug.visualize_array_sharding(x3)))
    add("visualize_array_sharding_jit", no_rich(
        lambda: jax.jit(lambda v: jax.debug.visualize_array_sharding(v))(x3)))
    add("visualize_sharding", no_rich(lambda: jax.debug.visualize_sharding((3,),
                                                                            x3.sharding)))
    add("effects", lambda: (str(jax.debug.DebugEffect()), str(jax.debug.OrderedDebugEffect())))

    # -- breakpoint --------------------------------------------------------------------------
    def session(fn, commands, *args):
        out = io.StringIO()
        result = fn(*args, stdin=io.StringIO(commands), stdout=out)
        print(out.getvalue())
        return result

    def bp(x, stdin, stdout):
        y = x * 2
        jax.debug.breakpoint(stdin=stdin, stdout=stdout, num_frames=1)
        return y
    add("breakpoint_eager", lambda: session(
        bp, "p x\np y\npp {'a': x}\nx + 1\nzzz\nw\nu\nd\nl\nc\n", x3))
    add("breakpoint_jit", lambda: session(
        lambda x, stdin, stdout: jax.jit(lambda v: bp(v, stdin, stdout))(x), "p x\np y\nc\n",
        x3))
    add("breakpoint_vmap", lambda: session(
        lambda x, stdin, stdout: jax.vmap(lambda v: bp(v, stdin, stdout))(x),
        "p x\nc\np x\nc\n", jnp.arange(2.)))
    add("breakpoint_grad", lambda: session(
        lambda x, stdin, stdout: jax.grad(lambda v: bp(v, stdin, stdout))(x), "p x\np y\nc\n",
        1.))

    def bp_token(x, stdin, stdout):
        tok = jax.debug.breakpoint(stdin=stdin, stdout=stdout, num_frames=1, token=x)
        return tok * 2
    add("breakpoint_token_jit", lambda: session(
        lambda x, stdin, stdout: jax.jit(lambda v: bp_token(v, stdin, stdout))(x),
        "p x\nc\n", x3))
    add("breakpoint_ordered_and_token", lambda: jax.debug.breakpoint(ordered=True, token=x3))
    return progs


def rich_programs(jax, jnp, lax, np):
    """visualize_* drawings: recorded (and tested) only where `rich` is installed (run the
    recorder with rich on PYTHONPATH)."""
    progs = []
    for shape in [(4,), (3, 5), (8, 2)]:
        x = jnp.zeros(shape)
        progs.append((f"rich_visualize_{shape}",
                      lambda x=x: jax.debug.visualize_array_sharding(x)))
        progs.append((f"rich_visualize_{shape}_no_color",
                      lambda x=x: jax.debug.visualize_array_sharding(x, use_color=False)))
    progs.append(("rich_visualize_sharding_scaled", lambda: jax.debug.visualize_sharding(
        (6,), jnp.zeros(6).sharding, min_width=20, scale=2.)))
    progs.append(("rich_visualize_jit", lambda: jax.jit(
        lambda x: jax.debug.visualize_array_sharding(x))(jnp.zeros((2, 2)))))
    progs.append(("rich_visualize_3d", lambda: jax.debug.visualize_sharding(
        (2, 2, 2), jnp.zeros(6).sharding)))
    return progs


def debug_jaxprs(jax, jnp, lax, np):
    from functools import partial
    experimental = __import__(jax.__name__ + ".experimental", fromlist=["io_callback"])
    io_callback = experimental.io_callback
    f32 = jax.ShapeDtypeStruct((), jnp.float32)
    x3 = np.arange(3, dtype=np.float32)
    cases = []

    def add(name, fn, *args):
        assert name not in {c[0] for c in cases}, name
        cases.append((name, fn, args))

    def all_kinds(x):
        jax.debug.print("x={}", x)
        jax.debug.print("x={x} y", x=x, ordered=True)
        jax.debug.print("s {} {}", "static", x)
        jax.debug.callback(lambda v: None, x)
        jax.debug.callback(lambda: None, ordered=True)
        y = jax.pure_callback(lambda v: v, f32, x)
        z = io_callback(lambda v: v, f32, x, ordered=True)
        jax.debug.inspect_array_sharding(x, callback=print)
        return jnp.sin(x) + y + z
    add("all_kinds", all_kinds, 1.)
    add("all_kinds_jit", jax.jit(all_kinds), 1.)

    def printed(x):
        jax.debug.print("x={}", x)
        return x * 2
    add("print_grad", jax.grad(printed), 1.)
    add("print_vmap", jax.vmap(printed), x3)
    add("print_vmap_axis_1", jax.vmap(printed, in_axes=1), x3.reshape(1, 3))
    add("print_jvp", lambda x, t: jax.jvp(printed, (x,), (t,)), 1., 1.)
    add("print_jit_grad", jax.jit(jax.grad(printed)), 1.)
    add("print_scan", lambda xs: lax.scan(lambda c, v: (printed(c + v), None), 0., xs), x3)
    add("print_unused_jit", jax.jit(lambda x: (printed(x), x)[1]), 1.)

    def cb(x, y):
        return x + y

    def fun(x, y, *, vmap_method):
        return jax.pure_callback(cb, jax.ShapeDtypeStruct(jnp.shape(x), jnp.float32), x, y,
                                 vmap_method=vmap_method)
    for method in ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                   "legacy_vectorized"]:
        add(f"pure_vmap_{method}", jax.vmap(partial(fun, vmap_method=method),
                                            in_axes=(0, None)), x3, 1.)
    add("io_vmap", jax.vmap(lambda v: io_callback(lambda w: w * 2, f32, v)), x3)
    add("log", lambda x: jax.debug.log("log {}", x), 1.)
    return cases


def main():
    sys.path.insert(0, HERE)
    from jaxpr_recording import _record, record_lines
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    records = []
    for x64 in (False, True):
        jax.config.update("jax_enable_x64", x64)
        for name, thunk in debug_programs(jax, jnp, lax, np):
            records.append({"name": name, "x64": x64, "stdout": run_captured(thunk)})
        if has_rich():
            for name, thunk in rich_programs(jax, jnp, lax, np):
                records.append({"name": name, "x64": x64, "stdout": run_captured(thunk)})
    for rec in _record(debug_jaxprs, False) + _record(debug_jaxprs, True):
        rec["name"] = "jaxpr_" + rec["name"]
        records.append(rec)
    with open(OUT, "w") as f:
        f.write('{"jax_version": %s, "records": [\n%s\n]}\n' % (json.dumps(jax.__version__),
                                                                 record_lines(records)))
    print(f"wrote {len(records)} records to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
