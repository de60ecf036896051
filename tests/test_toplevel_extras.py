"""Top-level names JAX 0.10.2 added late, against its recordings (tests/data/toplevel_extras.json,
written by tests/oracle/record_toplevel_extras.py): `jax.empty_ref`/`jax.free_ref` (jaxprs,
values, errors), `jax.fwd_and_bwd` (values, errors), `jax.smap` (values, jaxprs and errors on 4
devices, in a subprocess); and `jax.make_user_context` keying jit's cache (behaviour)."""
from __future__ import annotations


import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from recorded import (
    cases_under, check_jaxpr, check_raises, check_value, load, record_id, run_on_devices)

import record_toplevel_extras as recorder

DATA = load("toplevel_extras.json")
_CASES = {x64: cases_under(recorder.cases, x64) for x64 in (False, True)}
#: JAX's make_jaxpr of a function with no arguments calling empty_ref fails an assertion
#: inside JAX; pyjax does not copy that
_NO_JAXPR = {"empty_ref_eager"}


@pytest.mark.parametrize("rec", DATA["records"], ids=record_id)
def test_recorded(rec: dict) -> None:
    fn, args = _CASES[rec["x64"]][rec["name"]]
    with pyjax.enable_x64(rec["x64"]):
        if rec["name"] not in _NO_JAXPR:
            check_jaxpr(fn, args, rec)
        if "value_error" in rec:
            check_raises(fn, args, rec["value_error"])
        else:
            check_value(fn(*args), rec["value"])


def test_fwd_and_bwd_compiles_bwd_once() -> None:
    fwd, bwd = pyjax.fwd_and_bwd(lambda x, w: jnp.sin(x @ w), argnums=(0, 1))
    w = jnp.ones((3, 3))
    for i in range(3):
        y, res = fwd(jnp.full((2, 3), float(i)), w)
        assert callable(res) and pyjax.tree_util.tree_leaves(res)  # a pytree of residuals
        gx, gw = bwd(res, jnp.ones((2, 3)))
    assert len(fwd._cache) == 1 and len(bwd._cache) == 1
    want = pyjax.vjp(lambda x, w: jnp.sin(x @ w), jnp.full((2, 3), 2.0), w)[1](jnp.ones((2, 3)))
    np.testing.assert_allclose(gx, want[0], rtol=1e-6)
    np.testing.assert_allclose(gw, want[1], rtol=1e-6)


def test_make_user_context_keys_jit_cache() -> None:
    """The sequence JAX 0.10.2 gives (run under /work/oracle): a value's first use traces."""
    seen = []
    ctx = pyjax.make_user_context(default_value=None)

    @pyjax.jit
    def f(x):
        seen.append(ctx.value)
        return x * 2

    f(1.0)
    f(1.0)
    with ctx(1):
        f(1.0)
        f(1.0)
        assert ctx.value == 1 and ctx.get_global() is None
    with ctx(2):
        f(1.0)
    with ctx(1):
        f(1.0)
    f(1.0)
    ctx.set_global(5)
    f(1.0)
    assert ctx.value == 5 and ctx.get_global() == 5
    ctx.set_global(None)
    f(1.0)
    assert seen == [None, 1, 2, 5]


@pytest.fixture(scope="module")
def smap_results():
    return {r["name"]: r for r in run_on_devices("record_toplevel_extras", "run_smap", 4)}


@pytest.mark.parametrize("rec", DATA["smap"], ids=lambda r: r["name"])
def test_smap(smap_results: dict, rec: dict) -> None:
    got = smap_results[rec["name"]]
    assert got == rec
