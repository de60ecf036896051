"""`jax.custom_derivatives.linear_call` against JAX 0.10.2 (tests/data/linear_call.json,
written by tests/oracle/record_linear_call.py): jaxpr texts byte for byte, eager values and
errors, for calls, transposes of transposes, grads, pytrees and closed-over constants."""
from __future__ import annotations

import pytest

import pyjax
from recorded import cases_under, check_jaxpr, check_raises, check_value, load, record_id

import record_linear_call as recorder

_CASES = {x64: cases_under(recorder.cases, x64) for x64 in (False, True)}


@pytest.mark.parametrize("rec", load("linear_call.json")["records"], ids=record_id)
def test_linear_call(rec: dict) -> None:
    fn, args = _CASES[rec["x64"]][rec["name"]]
    with pyjax.enable_x64(rec["x64"]):
        check_jaxpr(fn, args, rec)
        if "value_error" in rec:
            check_raises(fn, args, rec["value_error"])
        else:
            check_value(fn(*args), rec["value"])
