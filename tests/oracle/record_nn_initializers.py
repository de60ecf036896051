"""Record JAX 0.10.2's jax.nn.initializers and jax.random.{orthogonal, binomial, multinomial}
into tests/data/nn_initializers.json.

    /work/oracle/bin/python tests/oracle/record_nn_initializers.py

Each case is built by `cases(jax, jnp, lax, np)` (which never imports jax itself, so
tests/test_nn_initializers.py builds the very same cases under pyjax): a name, a function of
keys, its arguments, and whether its jaxpr is recorded.  Values are recorded as exact bytes
(dtype, shape, hex), with x64 off and on; errors as class and message.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "nn_initializers.json")
sys.path.insert(0, HERE)

#: a dense kernel, a conv kernel (HWIO), a 3D conv kernel, a square and a wide matrix
SHAPES = [(5, 7), (3, 3, 4, 8), (2, 2, 2, 3, 5), (6, 6), (4, 9)]
MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")
NAMED = ("glorot_uniform", "glorot_normal", "xavier_uniform", "xavier_normal", "he_uniform",
         "he_normal", "kaiming_uniform", "kaiming_normal", "lecun_uniform", "lecun_normal")


def _call(init, shape, *args, **kwargs):
    return lambda k: init(k, shape, *args, **kwargs)


def _value_cases(jax, jnp, np):
    """(name, fn, (key,)): eager values of every initializer over modes, shapes and dtypes."""
    ini, random = jax.nn.initializers, jax.random
    key, key2, raw = random.key(0), random.key(42), random.PRNGKey(7)
    cases = []

    def add(name, fn, *keys):
        cases.append((name, fn, keys or (key,)))

    add("zeros", _call(ini.zeros, (2, 3)))
    add("zeros f16", _call(ini.zeros, (2, 3), jnp.float16))
    add("ones", _call(ini.ones, (3, 2)))
    add("ones int32", _call(ini.ones, (3,), jnp.int32))
    add("constant", _call(ini.constant(-7), (2, 3)))
    add("constant dtype", _call(ini.constant(2.5, jnp.bfloat16), (4,)))
    add("constant array", _call(ini.constant(jnp.array([1., 2., 3.])), (2, 3)))
    add("constant complex", _call(ini.constant(1 + 2j), (2,), jnp.complex64))
    for scale in (None, 10.0):
        for name in ("uniform", "normal", "truncated_normal"):
            builder = getattr(ini, name)
            init = builder() if scale is None else builder(scale)
            for shape in ((2, 3), (50,), ()):
                add(f"{name}({scale}) {shape}", _call(init, shape))
            add(f"{name}({scale}) key42", _call(init, (40,)), key2)
            add(f"{name}({scale}) raw key", _call(init, (40,)), raw)
            add(f"{name}({scale}) bf16", _call(init, (30,), jnp.bfloat16))
            add(f"{name}({scale}) f16", _call(init, (30,), jnp.float16))
    add("truncated_normal bounds", _call(ini.truncated_normal(3., lower=-1., upper=0.5), (60,)))
    add("truncated_normal dtype arg", _call(ini.truncated_normal(1., jnp.float16), (20,)))
    add("normal complex", _call(ini.normal(2.), (10,), jnp.complex64))
    for shape in SHAPES:
        for mode in MODES:
            for dist in DISTRIBUTIONS:
                add(f"vs 1.7 {mode} {dist} {shape}",
                    _call(ini.variance_scaling(1.7, mode, dist), shape))
    for dist in DISTRIBUTIONS:
        add(f"vs {dist} key42", _call(ini.variance_scaling(0.5, "fan_avg", dist), (64, 32)),
            key2)
        add(f"vs {dist} raw key", _call(ini.variance_scaling(2., "fan_in", dist), (8, 8)), raw)
        add(f"vs {dist} complex64",
            _call(ini.variance_scaling(1., "fan_in", dist), (6, 5), jnp.complex64))
        add(f"vs {dist} bf16", _call(ini.variance_scaling(1., "fan_in", dist), (6, 5),
                                     jnp.bfloat16))
        add(f"vs {dist} f16", _call(ini.variance_scaling(1., "fan_out", dist), (6, 5),
                                    jnp.float16))
        add(f"vs {dist} batch_axis", _call(ini.variance_scaling(
            1., "fan_avg", dist, in_axis=1, out_axis=2, batch_axis=0), (3, 4, 5)))
        add(f"vs {dist} axis tuples", _call(ini.variance_scaling(
            1., "fan_in", dist, in_axis=(0, 1), out_axis=(2, 3)), (2, 3, 4, 5)))
        add(f"vs {dist} 1d in_axis", _call(ini.variance_scaling(
            1., "fan_in", dist, in_axis=0, out_axis=0), (7,)))
        add(f"vs {dist} dtype arg", _call(ini.variance_scaling(
            1., "fan_in", dist, dtype=jnp.float16), (4, 4)))
    for name in NAMED:
        builder = getattr(ini, name)
        add(f"{name} dense", _call(builder(), (16, 8)))
        add(f"{name} conv", _call(builder(), (3, 3, 8, 16)))
        add(f"{name} conv in0 out1", _call(builder(in_axis=0, out_axis=1), (8, 16, 3, 3)))
        add(f"{name} batched", _call(builder(batch_axis=0), (4, 6, 5)))
    for shape in ((3, 3), (4, 6), (6, 4), (2, 3, 4), (5, 1)):
        add(f"orthogonal {shape}", _call(ini.orthogonal(), shape))
    add("orthogonal column_axis 0", _call(ini.orthogonal(column_axis=0), (3, 5)))
    add("orthogonal column_axis 1 3d", _call(ini.orthogonal(column_axis=1), (2, 4, 3)))
    add("orthogonal scale", _call(ini.orthogonal(2.5), (4, 4)))
    add("orthogonal complex64", _call(ini.orthogonal(), (3, 3), jnp.complex64))
    add("orthogonal dtype arg", _call(ini.orthogonal(dtype=jnp.complex64), (2, 3)))
    add("orthogonal empty", _call(ini.orthogonal(), (0, 3)))
    add("orthogonal key42", _call(ini.orthogonal(), (8, 8)), key2)
    for shape in ((3, 4, 4), (3, 3, 4, 6), (1, 3, 3, 2, 2), (4, 4, 3, 3)):
        add(f"delta_orthogonal {shape}", _call(ini.delta_orthogonal(), shape))
    add("delta_orthogonal scale axis", _call(ini.delta_orthogonal(0.5, column_axis=0),
                                             (3, 3, 4, 4)))
    return cases


def _random_cases(jax, jnp, np):
    """jax.random.orthogonal, binomial and multinomial."""
    random = jax.random
    key, key2 = random.key(0), random.key(42)
    cases = []

    def add(name, fn, *keys):
        cases.append((name, fn, keys or (key,)))

    add("random.orthogonal 3", lambda k: random.orthogonal(k, 3))
    add("random.orthogonal batch wide", lambda k: random.orthogonal(k, 3, (2,), m=5))
    add("random.orthogonal tall", lambda k: random.orthogonal(k, 5, (), jnp.float32, 2))
    add("random.orthogonal complex64", lambda k: random.orthogonal(k, 3, (), jnp.complex64))
    add("random.orthogonal raw key", lambda k: random.orthogonal(k, 4), random.PRNGKey(3))
    add("random.binomial small", lambda k: random.binomial(k, 5., 0.3, (40,)))
    add("random.binomial btrs", lambda k: random.binomial(k, 60., 0.4, (40,)), key2)
    add("random.binomial counts", lambda k: random.binomial(
        k, jnp.array([0., 3, 10, 40, 100, 1000, -1, jnp.nan, jnp.inf, 2.5]), 0.7))
    add("random.binomial probs", lambda k: random.binomial(
        k, 20, jnp.array([0., 0.1, 0.5, 0.9, 1.0, -0.1, 1.1, jnp.nan])))
    add("random.binomial broadcast", lambda k: random.binomial(
        k, jnp.array([[5.], [500.]]), jnp.array([0.2, 0.8]), (2, 2)))
    add("random.binomial f16", lambda k: random.binomial(k, 30., 0.5, (10,), jnp.float16))
    add("random.multinomial", lambda k: random.multinomial(k, 100., jnp.array([.2, .3, .5])))
    add("random.multinomial batch", lambda k: random.multinomial(
        k, jnp.array([10., 1000.]), jnp.array([[.2, .3, .5], [.1, 0., .9]])))
    add("random.multinomial shape", lambda k: random.multinomial(
        k, 30., jnp.array([.2, .3, .5]), shape=(4, 3)))
    add("random.multinomial int dtype", lambda k: random.multinomial(
        k, 30, jnp.array([.2, .3, .5]), dtype=jnp.int32))
    add("random.multinomial unnormalised", lambda k: random.multinomial(
        k, 50., jnp.array([2., 0., 1., 1.]), unroll=2), key2)
    return cases


def _transform_cases(jax, jnp, np):
    """The same initializers under jit (XLA's rewrites apply) and vmapped over keys."""
    ini, random = jax.nn.initializers, jax.random
    key, keys = random.key(5), random.split(random.key(6), 3)
    cases = []
    for name in ("glorot_normal", "he_uniform", "lecun_normal", "orthogonal"):
        init = getattr(ini, name)()
        cases.append((f"jit {name}", jax.jit(_call(init, (6, 4))), (key,)))
        cases.append((f"vmap {name}", jax.vmap(_call(init, (6, 4))), (keys,)))
    vs = ini.variance_scaling(2., "fan_out", "uniform", dtype=jnp.complex64)
    cases.append(("jit vs complex uniform", jax.jit(_call(vs, (4, 4))), (key,)))
    cases.append(("jit truncated_normal", jax.jit(_call(ini.truncated_normal(2.), (30,))),
                  (key,)))
    cases.append(("vmap normal", jax.vmap(_call(ini.normal(3.), (5,))), (keys,)))
    cases.append(("jit delta_orthogonal", jax.jit(_call(ini.delta_orthogonal(), (3, 3, 2, 2))),
                  (key,)))
    cases.append(("vmap random.binomial", jax.vmap(
        lambda k: random.binomial(k, 50., 0.3, (6,))), (keys,)))
    cases.append(("jit random.multinomial", jax.jit(
        lambda k: random.multinomial(k, 20., jnp.array([.5, .25, .25]))), (key,)))
    return cases


def value_cases(jax, jnp, lax, np):
    """Every value case: (name, fn, args)."""
    return _value_cases(jax, jnp, np) + _random_cases(jax, jnp, np) + \
        _transform_cases(jax, jnp, np)


def jaxpr_cases(jax, jnp, lax, np):
    """make_jaxpr(lambda k: init(k, shape)) of a sample: (name, fn, args)."""
    ini, random = jax.nn.initializers, jax.random
    key = random.key(0)
    inits = [
        ("zeros", ini.zeros, (2, 3)),
        ("constant", ini.constant(-7.), (2, 3)),
        ("uniform", ini.uniform(), (3,)),
        ("normal", ini.normal(2.), (3,)),
        ("truncated_normal", ini.truncated_normal(), (3,)),
        ("glorot_uniform", ini.glorot_uniform(), (2, 3)),
        ("he_normal", ini.he_normal(), (2, 3)),
        ("lecun_normal conv", ini.lecun_normal(), (3, 3, 2, 4)),
        ("vs normal fan_out", ini.variance_scaling(2., "fan_out", "normal"), (2, 3)),
        ("vs complex uniform", ini.variance_scaling(1., "fan_in", "uniform", dtype=jnp.complex64),
         (2, 3)),
        ("vs complex truncated", ini.variance_scaling(1., "fan_in", "truncated_normal",
                                                      dtype=jnp.complex64), (2, 3)),
        ("orthogonal", ini.orthogonal(), (3, 2)),
        ("delta_orthogonal", ini.delta_orthogonal(), (3, 2, 2)),
    ]
    cases = [(f"jaxpr {name}", _call(init, shape), (key,)) for name, init, shape in inits]
    cases += [
        ("jaxpr random.orthogonal", lambda k: random.orthogonal(k, 3), (key,)),
        ("jaxpr random.orthogonal wide", lambda k: random.orthogonal(k, 2, m=3), (key,)),
        ("jaxpr random.binomial", lambda k: random.binomial(k, 5., 0.3, (2,)), (key,)),
        ("jaxpr random.binomial strong p", lambda k: random.binomial(
            k, 5., jnp.float32(0.3), (2,)), (key,)),
        ("jaxpr random.multinomial", lambda k: random.multinomial(
            k, 10., jnp.array([.5, .5])), (key,)),
    ]
    return cases


def error_cases(jax, jnp, lax, np):
    """Calls JAX rejects: (name, fn, args)."""
    ini, random = jax.nn.initializers, jax.random
    key = random.key(0)
    return [
        ("err vs 1d default in_axis", _call(ini.glorot_uniform(), (5,)), (key,)),
        ("err vs 0d default in_axis", _call(ini.he_normal(), ()), (key,)),
        ("err vs bad mode", _call(ini.variance_scaling(1., "fan_max", "normal"), (2, 3)),
         (key,)),
        ("err vs bad distribution", _call(ini.variance_scaling(1., "fan_in", "cauchy"), (2, 3)),
         (key,)),
        ("err vs negative shape", _call(ini.lecun_normal(), (2, -3)), (key,)),
        ("err orthogonal 1d", _call(ini.orthogonal(), (4,)), (key,)),
        ("err delta_orthogonal 2d", _call(ini.delta_orthogonal(), (3, 3)), (key,)),
        ("err delta_orthogonal fan_in", _call(ini.delta_orthogonal(), (3, 3, 5, 4)), (key,)),
        ("err normal int dtype", _call(ini.normal(), (2,), jnp.int32), (key,)),
        ("err uniform int dtype", _call(ini.uniform(), (2,), jnp.int32), (key,)),
        ("err truncated_normal complex", _call(ini.truncated_normal(), (2,), jnp.complex64),
         (key,)),
        ("err glorot batched key", _call(ini.glorot_normal(), (2, 3)), (random.split(key),)),
        ("err normal sharding", _call(ini.normal(), (2,), None, "cpu"), (key,)),
        ("err zeros device sharding", _call(ini.zeros, (2,), None, "cpu"), (key,)),
        ("err orthogonal sharding", _call(ini.orthogonal(), (2, 2), None, "cpu"),
         (key,)),
        ("err random.orthogonal batched key", lambda k: random.orthogonal(k, 3),
         (random.split(key),)),
        ("err random.orthogonal int dtype", lambda k: random.orthogonal(k, 3, (), jnp.int32),
         (key,)),
        ("err random.binomial int dtype", lambda k: random.binomial(k, 3., .5, (2,), jnp.int32),
         (key,)),
        ("err random.binomial list", lambda k: random.binomial(k, [3.], .5), (key,)),
        ("err random.binomial shape", lambda k: random.binomial(k, jnp.ones(3), .5, (2,)),
         (key,)),
        ("err random.multinomial list", lambda k: random.multinomial(k, 3., [.5, .5]), (key,)),
    ]


def encode(x, np):
    """dtype, shape and the exact bytes (hex) of an array."""
    a = np.asarray(x)
    return {"dtype": a.dtype.name, "shape": list(a.shape), "hex": a.tobytes(order="C").hex()}


def _record(x64):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    from jaxpr_recording import error_record

    jax.config.update("jax_enable_x64", x64)
    records = []
    for name, fn, args in value_cases(jax, jnp, lax, np):
        records.append({"kind": "value", "name": name, "x64": x64,
                        "value": encode(fn(*args), np)})
    for name, fn, args in jaxpr_cases(jax, jnp, lax, np):
        records.append({"kind": "jaxpr", "name": name, "x64": x64,
                        "jaxpr": str(jax.make_jaxpr(fn)(*args))})
    for name, fn, args in error_cases(jax, jnp, lax, np):
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - JAX's error is the record
            records.append({"kind": "error", "name": name, "x64": x64,
                            "error": error_record(e)})
        else:
            raise AssertionError(f"{name} raised nothing")
    return records


def main():
    from jaxpr_recording import write_records
    write_records(_record(False) + _record(True), OUT)


if __name__ == "__main__":
    main()
