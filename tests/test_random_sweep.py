"""Every public `jax.random` function against JAX 0.10.2's recordings
(tests/data/random_sweep.json, written by tests/oracle/record_random_sweep.py): make_jaxpr's
text byte for byte, and the eager value bit for bit (a few float results to the ulps named
below, where pyjax's elementwise functions are not XLA's), or JAX's error."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.backend import tier1

from op_table import x64_mode
from recorded import check_jaxpr, check_raises, load, record_id

import record_random_sweep as recorder

DATA = load("random_sweep.json")

#: (name, x64) -> why pyjax's jaxpr differs from JAX's
JAXPR_DIFFERENCES: dict[tuple[str, bool], str] = {}

#: tier 1 forced on small clusters: float64 transcendentals are libmvec's vector functions
TIER1_F64_ULPS = 4
_EXP32 = "float32 exp of a small array (tier 0) is NumPy's, XLA's polynomial differs by 1 ulp"
_LIBM64 = "float64 exp/log/pow are NumPy's (glibc); XLA's differ in the last bits"
#: (name, x64) -> (ulps allowed in float results, why)
VALUE_ULPS = {
    ("ball", False): (1, _EXP32), ("dirichlet", False): (1, _EXP32), ("f", False): (1, _EXP32),
    ("grad loggamma", False): (1, _EXP32), ("gumbel high", True): (2, _LIBM64),
    ("ball p1", True): (1, _LIBM64), ("beta", True): (1, _LIBM64),
    ("chisquare", True): (1, _LIBM64), ("f", True): (1, _LIBM64),
}


def _cases(x64: bool) -> dict:
    with x64_mode(x64):
        return {name: (fn, args) for name, fn, args in recorder.cases(pyjax, jnp, lax, np)}


CASES = {x64: _cases(x64) for x64 in (False, True)}


def _param(rec: dict, known: dict) -> object:
    reason = known.get((rec["name"], rec["x64"]))
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if isinstance(reason, str) else []
    return pytest.param(rec, id=record_id(rec), marks=marks)


def _check_bits(got: object, want: object, ulps: int) -> None:
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            _check_bits(g, w, ulps)
        return
    assert (got["dtype"], got["shape"]) == (want["dtype"], want["shape"])
    if ulps and np.dtype(jnp.dtype(want["dtype"])).kind == "f":
        # same-signed finite floats: their bit patterns are ordered as the values
        diff = np.abs(np.array(got["bits"], object) - np.array(want["bits"], object))
        assert max(diff, default=0) <= ulps, (got["bits"], want["bits"])
    else:
        assert got["bits"] == want["bits"]


@pytest.mark.parametrize("rec", [_param(r, JAXPR_DIFFERENCES) for r in DATA["records"]])
def test_jaxpr(rec: dict) -> None:
    fn, args = CASES[rec["x64"]][rec["name"]]
    with x64_mode(rec["x64"]):
        check_jaxpr(fn, args, rec)


@pytest.mark.parametrize("rec", DATA["records"], ids=record_id)
def test_value(rec: dict) -> None:
    fn, args = CASES[rec["x64"]][rec["name"]]
    if "value_error" in rec:  # JAX refuses it when running it (a pad of keys: at lowering)
        with x64_mode(rec["x64"]):
            check_raises(fn, args, rec["value_error"])
        return
    ulps = VALUE_ULPS.get((rec["name"], rec["x64"]), (0, ""))[0]
    if tier1.FORCED and rec["x64"]:
        ulps = max(ulps, TIER1_F64_ULPS)
    with x64_mode(rec["x64"]):
        _check_bits(recorder.bits_of(np, pyjax, fn(*args)), rec["value"], ulps)
