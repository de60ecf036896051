"""`jax.experimental.hijax` against JAX 0.10.2 (tests/data/refs_hijax.json, written by
tests/oracle/record_refs_hijax.py): JAX's Box and a VJPHiPrimitive, jaxprs byte for byte and
values eager, under jit and grad.  flax.nnx, which builds on hijax, is trained under the alias
in tests/ecosystem/."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.hijax import Box
from recorded import cases_under, check_jaxpr, check_value, load, record_id

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


def test_box_set_under_grad_is_an_error_as_in_jax() -> None:
    def f(x):
        b = Box(x)
        return b.get().sum()
    with pytest.raises(Exception, match="can't differentiate Box.set operation"):
        pyjax.grad(f)(jnp.arange(3.0))

