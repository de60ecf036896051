"""Mutable array references against JAX 0.10.2 (tests/data/refs_hijax.json, written by
tests/oracle/record_refs_hijax.py): jaxpr texts byte for byte, eager values, errors; plus
eager mutation semantics and references read and written under jit."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from recorded import cases_under, check_jaxpr, check_raises, check_value, load, record_id

import record_refs_hijax as recorder

_CASES = {x64: cases_under(recorder.cases, x64) for x64 in (False, True)}
_RECORDS = [r for r in load("refs_hijax.json")["records"] if r["name"].startswith("ref_")]


@pytest.mark.parametrize("rec", _RECORDS, ids=record_id)
def test_ref_jaxpr_and_value(rec: dict) -> None:
    fn, args = _CASES[rec["x64"]][rec["name"]]
    with pyjax.enable_x64(rec["x64"]):
        check_jaxpr(fn, args, rec)
        if "value_error" in rec:
            check_raises(fn, args, rec["value_error"])
        else:
            check_value(fn(*args), rec["value"])
            check_value(pyjax.jit(fn)(*args), rec["value"])


def test_eager_ref_mutates_in_place() -> None:
    r = pyjax.new_ref(jnp.arange(4))
    assert isinstance(r, pyjax.Ref) and not isinstance(r, pyjax.Array)
    assert str(pyjax.typeof(r)) == "Ref{int32[4]}" and len(r) == 4
    r[1] = 7
    r[2:] += 1
    assert repr(r) == "Ref([0, 7, 3, 4], dtype=int32)"
    frozen = pyjax.freeze(r)
    r[0] = 9  # the frozen value does not change with the reference
    np.testing.assert_array_equal(frozen, [0, 7, 3, 4])
    np.testing.assert_array_equal(r[...], [9, 7, 3, 4])


def test_ref_created_from_numpy_does_not_alias() -> None:
    x = np.zeros(3, np.float32)
    r = pyjax.new_ref(x)
    r[...] = jnp.ones(3)
    np.testing.assert_array_equal(x, 0.0)


def test_traced_ref_isinstance() -> None:
    seen = []

    def f(x):
        r = pyjax.new_ref(x)
        seen.append(isinstance(r, pyjax.Ref))
        return r[...]
    pyjax.make_jaxpr(f)(1.0)
    assert seen == [True]
