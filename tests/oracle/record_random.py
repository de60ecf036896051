"""Record jax.random outputs of real JAX 0.10.2 into tests/data/random.json.

Run with the oracle interpreter (jax==0.10.2, CPU, jax_threefry_partitionable on):

    /work/oracle/bin/python tests/oracle/record_random.py

Each record holds a Python expression over `random`, `jnp`, `np` (evaluated the same way by
tests/test_random.py with pyjax), whether x64 was on (and `partitionable: false` for the few
recorded with jax_threefry_partitionable off), and JAX's answer: dtype, shape and the raw
bits of every element (so floats can be compared in ulps), a jaxpr's text, or an error's class
and message (hex addresses replaced by 0x?).
"""
import json
import os
import re

import numpy as np

import jax
import jax.numpy as jnp
from jax import random

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                   "random.json")
_ADDR = re.compile(r"0x[0-9a-fA-F]{6,}")

SEEDS = (0, 42, -1, 2 ** 31 - 1, 12345)
SHAPES = ("()", "(5,)", "(3, 4)")


def value_cases(x64):
    """Expressions whose values are recorded: (name, expression)."""
    cases = []
    for s in SEEDS:
        cases.append((f"PRNGKey({s})", f"random.PRNGKey({s})"))
        cases.append((f"key_data(key({s}))", f"random.key_data(random.key({s}))"))
    cases += [("PRNGKey(np.int8(-3))", "random.PRNGKey(np.int8(-3))"),
              ("PRNGKey(np.uint32(4000000000))", "random.PRNGKey(np.uint32(4000000000))"),
              ("PRNGKey(2**40+5)", "random.PRNGKey(2**40 + 5)"),
              ("PRNGKey(True)", "random.PRNGKey(True)")]
    dtypes = ["jnp.uint8", "jnp.uint16", "jnp.uint32"] + (["jnp.uint64"] if x64 else [])
    for s in SEEDS[:3]:
        for shape in SHAPES:
            for dt in dtypes:
                cases.append((f"bits-{s}-{shape}-{dt}",
                              f"random.bits(random.PRNGKey({s}), {shape}, {dt})"))
        for num in ("2", "3", "(2, 3)", "1"):
            cases.append((f"split-{s}-{num}", f"random.split(random.PRNGKey({s}), {num})"))
            cases.append((f"split-typed-{s}-{num}",
                          f"random.key_data(random.split(random.key({s}), {num}))"))
        for data in (0, 1, 7, 2 ** 32 - 1, "np.uint32(123456789)", "jnp.int32(-5)"):
            cases.append((f"fold_in-{s}-{data}", f"random.fold_in(random.PRNGKey({s}), {data})"))
    cases.append(("split chain", "random.split(random.split(random.split(random.PRNGKey(3))[1], "
                                 "5)[4], 3)"))
    floats = ["jnp.float32", "jnp.float16", "jnp.bfloat16"] + (["jnp.float64"] if x64 else [])
    for s in SEEDS[:3]:
        for shape in SHAPES + ("(64,)",):
            for dt in floats:
                cases.append((f"uniform-{s}-{shape}-{dt}",
                              f"random.uniform(random.PRNGKey({s}), {shape}, {dt})"))
                cases.append((f"normal-{s}-{shape}-{dt}",
                              f"random.normal(random.PRNGKey({s}), {shape}, {dt})"))
    cases += [
        ("uniform range", "random.uniform(random.key(5), (50,), minval=-3.0, maxval=7.5)"),
        ("uniform array range", "random.uniform(random.key(5), (2, 3), minval=jnp.array([0., 1., "
                                "2.]), maxval=jnp.array([1., 3., 10.]))"),
        ("uniform min>max", "random.uniform(random.key(5), (4,), minval=5., maxval=2.)"),
        ("normal complex64", "random.normal(random.key(9), (6,), jnp.complex64)"),
        ("normal 1000", "random.normal(random.key(11), (1000,))"),
    ]
    ints = ["jnp.int32", "jnp.int8", "jnp.uint8", "jnp.int16"] + (["jnp.int64"] if x64 else [])
    for s in SEEDS[:3]:
        for dt in ints:
            cases.append((f"randint-{s}-{dt}",
                          f"random.randint(random.PRNGKey({s}), (40,), 0, 100, {dt})"))
    cases += [
        ("randint wide", "random.randint(random.key(2), (50,), -2**31, 2**31 - 1)"),
        ("randint arrays", "random.randint(random.key(2), (2, 3), jnp.array([0, 10, -50]), "
                           "jnp.array([5, 1000, 50]))"),
        ("randint min>max", "random.randint(random.key(2), (4,), 5, 2)"),
        ("randint uint8 256", "random.randint(random.key(2), (30,), 0, 256, jnp.uint8)"),
        ("randint scalar", "random.randint(random.key(3), (), 0, 10)"),
    ]
    for s in SEEDS[:3]:
        cases.append((f"bernoulli-{s}", f"random.bernoulli(random.PRNGKey({s}), 0.3, (50,))"))
    cases += [
        ("bernoulli array p", "random.bernoulli(random.key(4), jnp.array([0.1, 0.5, 0.9]), "
                              "(4, 3))"),
        ("bernoulli default", "random.bernoulli(random.key(4))"),
        ("bernoulli high", "random.bernoulli(random.key(4), 0.25, (20,), mode='high')"),
    ]
    for s in SEEDS[:3]:
        cases.append((f"categorical-{s}", f"random.categorical(random.PRNGKey({s}), "
                                          "jnp.log(jnp.array([0.1, 0.2, 0.3, 0.4])), "
                                          "shape=(50,))"))
        cases.append((f"permutation-{s}", f"random.permutation(random.PRNGKey({s}), 20)"))
    cases += [
        ("categorical 2d", "random.categorical(random.key(6), jnp.array([[0., 1., 2.], "
                           "[2., 1., 0.]]), axis=1, shape=(4, 2))"),
        ("categorical axis0", "random.categorical(random.key(6), jnp.arange(6.).reshape(3, 2), "
                              "axis=0)"),
        ("categorical no replace", "random.categorical(random.key(6), jnp.array([[0.1, 1., 2., "
                                   "0.5], [1., 1., 1., 1.]]), shape=(3, 2), replace=False)"),
        ("permutation 5000", "random.permutation(random.key(8), 5000)[:40]"),
        ("permutation array", "random.permutation(random.key(8), jnp.arange(12).reshape(3, 4), "
                              "axis=1)"),
        ("permutation independent", "random.permutation(random.key(8), jnp.arange(12)."
                                    "reshape(3, 4), axis=1, independent=True)"),
        ("choice", "random.choice(random.key(10), 10, (6,))"),
        ("choice no replace", "random.choice(random.key(10), 10, (6,), replace=False)"),
        ("choice p", "random.choice(random.key(10), 5, (8,), p=jnp.array([.1, .2, .3, .2, .2]))"),
        ("choice p no replace", "random.choice(random.key(10), 5, (3,), replace=False, "
                                "p=jnp.array([.1, .2, .3, .2, .2]))"),
        ("choice array axis", "random.choice(random.key(10), jnp.arange(20).reshape(4, 5), (2,), "
                              "axis=1)"),
        ("rademacher", "random.rademacher(random.key(12), (20,))"),
        ("geometric", "random.geometric(random.key(12), 0.3, (20,))"),
        ("poisson small", "random.poisson(random.key(12), 3.5, (30,))"),
        ("poisson large", "random.poisson(random.key(12), 50.0, (30,))"),
        ("poisson mixed", "random.poisson(random.key(12), jnp.array([0., 0.5, 9.9, 10., 250.]))"),
        ("gamma", "random.gamma(random.key(13), jnp.array([0.3, 1., 2.5, 10.]))"),
        ("exponential", "random.exponential(random.key(14), (8,))"),
        ("truncated_normal", "random.truncated_normal(random.key(14), -1., 2., (8,))"),
    ]
    return cases


#: Values with jax_threefry_partitionable off (JAX's original counter scheme).
ORIGINAL_SCHEME_CASES = [
    ("original split", "random.split(random.PRNGKey(7), (2, 3))"),
    ("original bits", "random.bits(random.PRNGKey(7), (5,))"),
    ("original bits odd uint8", "random.bits(random.PRNGKey(7), (7,), jnp.uint8)"),
    ("original bits uint16", "random.bits(random.PRNGKey(7), (3,), jnp.uint16)"),
    ("original normal", "random.normal(random.key(7), (5,))"),
    ("original randint", "random.randint(random.PRNGKey(7), (9,), 0, 100)"),
    ("original fold_in", "random.fold_in(random.PRNGKey(7), 3)"),
    ("original permutation", "random.permutation(random.key(7), 10)"),
]

ERROR_CASES = [
    ("float seed", "random.PRNGKey(1.5)"),
    ("float32 seed", "random.key(np.float32(2))"),
    ("array seed", "random.PRNGKey(jnp.array([1, 2]))"),
    ("key seed", "random.key(random.key(0))"),
    ("seed overflow", "random.PRNGKey(2**63)"),
    ("key shape (3,)", "random.normal(jnp.zeros(3, jnp.uint32))"),
    ("key dtype int32", "random.normal(jnp.zeros(2, jnp.int32))"),
    ("key dtype float32", "random.uniform(jnp.zeros(2))"),
    ("key batched", "random.normal(random.split(random.PRNGKey(0)))"),
    ("key list", "random.normal([0, 1])"),
    ("key int", "random.normal(3)"),
    ("split batched", "random.split(random.split(random.key(0)))"),
    ("wrap_key_data shape", "random.wrap_key_data(jnp.zeros(3, jnp.uint32))"),
    ("randint negative shape", "random.randint(random.key(0), (-1,), 0, 5)"),
    ("choice negative shape", "random.choice(random.key(0), 5, (-1,))"),
    ("choice too many", "random.choice(random.key(0), 3, (5,), replace=False)"),
    ("choice empty population", "random.choice(random.key(0), 0, (2,))"),
    ("choice negative population", "random.choice(random.key(0), -3, (2,))"),
    ("choice shape int", "random.choice(random.key(0), 3, 2)"),
    ("permutation float", "random.permutation(random.key(0), 2.5)"),
    ("fold_in -1", "random.fold_in(random.key(0), -1)"),
    ("fold_in 2**32", "random.fold_in(random.key(0), 2**32)"),
    ("fold_in array", "random.fold_in(random.key(0), jnp.array([1, 2]))"),
    ("bits float dtype", "random.bits(random.key(0), (2,), jnp.float32)"),
    ("uniform int dtype", "random.uniform(random.key(0), dtype=jnp.int32)"),
    ("normal int dtype", "random.normal(random.key(0), dtype=jnp.int32)"),
    ("randint float dtype", "random.randint(random.key(0), (2,), 0, 5, dtype=jnp.float32)"),
    ("bernoulli int p", "random.bernoulli(random.key(0), 1, (3,))"),
    ("bernoulli mode", "random.bernoulli(random.key(0), 0.5, mode='middle')"),
    ("key to numpy", "np.asarray(random.key(1))"),
    ("key plus one", "random.key(1) + 1"),
    ("split negative", "random.split(random.key(0), -1)"),
    ("split negative in shape raw", "random.split(random.PRNGKey(0), (2, -1))"),
    ("normal negative shape", "random.normal(random.key(0), (-1,))"),
]

JAXPR_CASES = [
    ("split raw", "random.split", "random.PRNGKey(0)"),
    ("split typed", "random.split", "random.key(0)"),
    ("PRNGKey", "random.PRNGKey", "0"),
    ("key", "random.key", "0"),
    ("normal typed (3,)", "lambda k: random.normal(k, (3,))", "random.key(0)"),
    ("uniform raw (2,)", "lambda k: random.uniform(k, (2,))", "random.PRNGKey(0)"),
    ("fold_in", "lambda k: random.fold_in(k, 3)", "random.PRNGKey(0)"),
    ("bits", "lambda k: random.bits(k, (2,))", "random.PRNGKey(0)"),
    ("key_data", "random.key_data", "random.key(0)"),
    ("wrap_key_data", "random.wrap_key_data", "random.PRNGKey(0)"),
    ("unpack under jit", "lambda k: random.normal(random.split(k)[1], (2,))", "random.key(0)"),
    ("permutation", "lambda k: random.permutation(k, 5)", "random.key(0)"),
    ("bernoulli", "lambda k: random.bernoulli(k, 0.3, (3,))", "random.key(0)"),
    ("exponential", "lambda k: random.exponential(k, (3,))", "random.key(0)"),
    ("gamma", "lambda k: random.gamma(k, 2.0, (3,))", "random.key(0)"),
    ("truncated_normal", "lambda k: random.truncated_normal(k, -1., 1., (2,))", "random.key(0)"),
    ("normal complex64", "lambda k: random.normal(k, (2,), jnp.complex64)", "random.key(0)"),
    ("normal raw scalar", "random.normal", "random.PRNGKey(0)"),
    ("randint", "lambda k: random.randint(k, (3,), 0, 10)", "random.PRNGKey(0)"),
    ("gumbel", "lambda k: random.gumbel(k, (3,))", "random.key(0)"),
    ("poisson", "lambda k: random.poisson(k, 3.0, (2,))", "random.key(0)"),
]


def _scope():
    return {"random": random, "jnp": jnp, "np": np}


def _value(x):
    """dtype, shape and the bits of each element (floats as unsigned ints of their width)."""
    if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
        x = random.key_data(x)
    a = np.asarray(x)
    if a.dtype.kind in "fcV":  # V: bfloat16
        a = a.view(f"u{a.itemsize // 2 if a.dtype.kind == 'c' else a.itemsize}")
    return {"dtype": np.asarray(x).dtype.name, "shape": list(np.shape(x)),
            "bits": [int(v) for v in np.ravel(a)]}


def record(x64):
    jax.config.update("jax_enable_x64", x64)
    records = []
    for name, expr in value_cases(x64):
        records.append({"kind": "value", "name": name, "expr": expr, "x64": x64,
                        **_value(eval(expr, _scope()))})
    jax.config.update("jax_threefry_partitionable", False)
    for name, expr in ORIGINAL_SCHEME_CASES:
        records.append({"kind": "value", "name": name, "expr": expr, "x64": x64,
                        "partitionable": False, **_value(eval(expr, _scope()))})
    jax.config.update("jax_threefry_partitionable", True)
    if not x64:
        for name, expr in ERROR_CASES:
            try:
                eval(expr, _scope())
            except Exception as e:  # noqa: BLE001
                records.append({"kind": "error", "name": name, "expr": expr, "x64": x64,
                                "type": type(e).__name__, "message": _ADDR.sub("0x?", str(e))})
            else:
                raise AssertionError(f"{name} raised nothing")
        for name, fn, arg in JAXPR_CASES:
            text = str(jax.make_jaxpr(eval(fn, _scope()))(eval(arg, _scope())))
            records.append({"kind": "jaxpr", "name": name, "fn": fn, "arg": arg, "x64": x64,
                            "text": text})
    return records


def main():
    records = record(False) + record(True)
    with open(OUT, "w") as f:
        f.write('{"jax_version": %s, "records": [\n' % json.dumps(jax.__version__))
        f.write(",\n".join(json.dumps(r, sort_keys=True) for r in records))
        f.write("\n]}\n")
    print(f"wrote {len(records)} records to {OUT}")


if __name__ == "__main__":
    main()
