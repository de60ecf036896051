"""A scan without carry (lax.map) runs its body batched over blocks of iterations
(control_flow/scan._map_block): the same values as one iteration at a time."""
import importlib

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax

scan = importlib.import_module("pyjax._src.primitives.control_flow.scan")  # (the package's
# `scan` is the function)


def _one_at_a_time(monkeypatch):
    monkeypatch.setattr(scan, "MAP_BLOCK_BYTES", 1)


@pytest.mark.parametrize("block_bytes", [128, 1 << 22])  # blocks of 3 (and one), all
def test_batched_map_equals_the_loop(monkeypatch, block_bytes):
    x = np.random.default_rng(0).standard_normal((37, 4)).astype(np.float32)
    c = np.float32(0.3)

    def body(row):  # a while loop whose trip count depends on the row, as gamma's grad has
        def step(s):
            return s[0] + 1, s[1] * 0.5 + jnp.sin(s[1]) * c
        return lax.while_loop(lambda s: s[0] < (jnp.abs(row[0]) * 5).astype(jnp.int32),
                              step, (0, row))[1], jnp.sum(row)

    f = jax.jit(lambda x: lax.map(body, x))
    monkeypatch.setattr(scan, "MAP_BLOCK_BYTES", block_bytes)
    assert scan._map_block(jax.make_jaxpr(lambda x: lax.map(body, x))(x).eqns[0]
                           .params["jaxpr"], 37, 0, [x]) > 1
    batched = [np.asarray(o) for o in f(x)]
    _one_at_a_time(monkeypatch)
    looped = [np.asarray(o) for o in jax.jit(lambda x: lax.map(body, x))(x)]
    for b, l in zip(batched, looped):
        np.testing.assert_array_equal(b, l)


def test_gamma_grad_values_do_not_depend_on_the_blocks(monkeypatch):
    key, a = jax.random.key(0), jnp.linspace(0.05, 50.0, 300)
    f = lambda a: jax.grad(lambda a: jax.random.gamma(key, a).sum())(a)  # noqa: E731
    batched = np.asarray(jax.jit(f)(a))
    _one_at_a_time(monkeypatch)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: f(a) + 0.0)(a)), batched)


def test_a_body_with_effects_runs_in_order(capsys):
    def body(x):
        jax.debug.print("{}", x)
        return x * 2
    out = jax.jit(lambda x: lax.map(body, x))(jnp.arange(4))
    np.testing.assert_array_equal(out, [0, 2, 4, 6])
    assert capsys.readouterr().out.split() == ["0", "1", "2", "3"]
