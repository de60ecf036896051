"""`jax.ds` against JAX 0.10.2's recordings (tests/data/ds.json, written by
tests/oracle/record_ds.py): jaxprs, values and errors of jnp indexing, `.at[]` updates and
reference indexing by a `Slice`, under vmap and grad; its pytree and constructor."""
from __future__ import annotations

import pytest

import pyjax
import numpy as np

from recorded import check_jaxpr, check_raises, check_value, load, record_id

import record_ds as recorder

DATA = load("ds.json")
_CASES = {name: (fn, args, traced)
          for name, fn, args, traced in recorder.cases(pyjax, pyjax.numpy, pyjax.lax, np)}


@pytest.mark.parametrize("rec", DATA["records"], ids=record_id)
def test_recorded(rec: dict) -> None:
    fn, args, traced = _CASES[rec["name"]]
    if traced:
        check_jaxpr(fn, args, rec)
    if "value_error" in rec:
        check_raises(fn, args, rec["value_error"])
    else:
        check_value(fn(*args), rec["value"])


def test_top_level_name():
    assert pyjax.ds is pyjax._src.dslice.dslice
    assert isinstance(pyjax.ds(1, 2), pyjax._src.dslice.Slice)
    # as JAX 0.10.2 prints them
    assert repr(pyjax.ds(3, 2)) == "Slice(start=3, size=2, stride=1)"
    assert repr(pyjax.ds(5)) == "Slice(start=0, size=5, stride=1)"
