"""`jax.experimental.hijax` against JAX 0.10.2 (tests/data/refs_hijax.json, written by
tests/oracle/record_refs_hijax.py): JAX's Box and a VJPHiPrimitive, jaxprs byte for byte and
values eager, under jit and grad; and flax.nnx (which builds on hijax) under the alias,
against JAX's losses (tests/data/nnx_hijax_losses.json, from tests/oracle/nnx_hijax_program.py)."""
from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.hijax import Box
from recorded import HERE, cases_under, check_jaxpr, check_value, load, record_id

import record_refs_hijax as recorder

_CASES = {x64: cases_under(recorder.cases, x64) for x64 in (False, True)}
_RECORDS = [r for r in load("refs_hijax.json")["records"] if not r["name"].startswith("ref_")]
#: pyjax differentiates a VJPHiPrimitive through its own linearize/transpose: the value is
#: JAX's, the staged jaxpr (JAX expands the primitive first) is not compared
_VALUE_ONLY = {"vjp_hi_primitive_grad"}


@pytest.mark.parametrize("rec", _RECORDS, ids=record_id)
def test_hijax_jaxpr_and_value(rec: dict) -> None:
    fn, args = _CASES[rec["x64"]][rec["name"]]
    with pyjax.enable_x64(rec["x64"]):
        if rec["name"] not in _VALUE_ONLY:
            check_jaxpr(fn, args, rec)
        check_value(fn(*args), rec["value"])
        check_value(pyjax.jit(fn)(*args), rec["value"])


def test_box_eager_state() -> None:
    b = Box(1.0)
    assert isinstance(b, Box) and repr(pyjax.typeof(b)) == "BoxTy()"
    state = b.type_state()
    assert state.leaf_avals == (pyjax.core.ShapedArray((), np.dtype("float32"), True),)
    b.set({"a": jnp.ones(2)})
    np.testing.assert_array_equal(b.get()["a"], [1.0, 1.0])


@pytest.mark.xfail(strict=True, reason="jvp lifts a Box with ad.tangent_aval, which reads "
                   "aval.dtype; it should use a hijax aval's to_tangent_aval()")
def test_box_set_under_grad_is_an_error_as_in_jax() -> None:
    def f(x):
        b = Box(x)
        return b.get().sum()
    with pytest.raises(Exception, match="can't differentiate Box.set operation"):
        pyjax.grad(f)(jnp.arange(3.0))


_ECO = "/work/eco/bin/python"
_PROGRAM = os.path.join(HERE, "oracle", "nnx_hijax_program.py")


def _run_nnx(*flags: str) -> dict:
    done = subprocess.run([_ECO, _PROGRAM, "pyjax", *flags], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _check_against_jax(got: dict, want: dict) -> None:
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=2e-5)
    np.testing.assert_allclose(got["pred"], want["pred"], rtol=2e-5, atol=1e-6)


@pytest.mark.skipif(not os.path.exists(_ECO), reason="needs the /work/eco venv (flax, optax)")
def test_nnx_linear_adam_under_alias_matches_jax() -> None:
    _check_against_jax(_run_nnx(), load("nnx_hijax_losses.json")["plain"])


@pytest.mark.skipif(not os.path.exists(_ECO), reason="needs the /work/eco venv (flax, optax)")
@pytest.mark.xfail(strict=True, reason="nnx.Dropout reads jax.typeof(x).sharding and passes "
                   "out_sharding= to random.bernoulli; pyjax's ShapedArray has no sharding")
def test_nnx_dropout_under_alias_matches_jax() -> None:
    _check_against_jax(_run_nnx("dropout"), load("nnx_hijax_losses.json")["dropout"])
