"""jnp.einsum's `_dot_general=` substitution and its `precision=` / `preferred_element_type=`,
against JAX's records (tests/data/einsum_dot_general.json,
tests/oracle/record_einsum_dot_general.py): the calls made to the substitute, the results and
the jaxprs, with x64 off and on."""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "oracle"))
import record_einsum_dot_general as R  # noqa: E402

with open(os.path.join(HERE, "data", "einsum_dot_general.json")) as f:
    DATA = json.load(f)

MODES = {"x64_off": False, "x64_on": True}
_RESULTS: dict = {}


def results(mode: str) -> dict:
    if mode not in _RESULTS:
        _RESULTS[mode] = R.run(pyjax, jnp, lax, np, MODES[mode])
    return _RESULTS[mode]


CASES = [(mode, name) for mode in MODES for name in DATA[mode]]


@pytest.mark.parametrize("mode,name", CASES, ids=[f"{m}-{n}" for m, n in CASES])
def test_einsum_case(mode: str, name: str) -> None:
    want, got = DATA[mode][name], results(mode)[name]
    assert set(got) == set(want), got.get("error") or got.get("jaxpr_error")
    assert got["calls"] == want["calls"]
    assert got["jaxpr"] == want["jaxpr"]
    g, w = got["value"], want["value"]
    assert (g["dtype"], g["shape"]) == (w["dtype"], w["shape"])
    np.testing.assert_allclose(g["values"], w["values"], rtol=2e-6 if "bf" not in name else 1e-2)


def test_records_cover_the_cases() -> None:
    names = {name for name, _, _ in R.cases(pyjax, jnp, lax, np)}
    assert names == set(DATA["x64_off"]) == set(DATA["x64_on"])


def test_substitute_result_is_used() -> None:
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    out = jnp.einsum("ij,kj->ik", x, x,
                     _dot_general=lambda a, b, dims, prec, preferred_element_type=None:
                     lax.dot_general(a, b, dims, prec,
                                     preferred_element_type=preferred_element_type) + 1)
    np.testing.assert_allclose(out, x @ x.T + 1)
