"""Bad input raises JAX's error class with JAX's message (tests/data/errors.json, recorded from
JAX 0.10.2 by tests/oracle/record.py).

Messages are compared exactly, except that tracer-error messages are compared line by line up
to the docs link (pyjax adds a line on how to fix the error) and paths are normalised.
"""
import json
import os
import re
import sys

import numpy as np
import pytest

import pyjax as jax
import pyjax.lax as lax
import pyjax.numpy as jnp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "oracle"))
import cases  # noqa: E402

RECORDS = {(r["name"], r["x64"]): r
           for r in json.load(open(os.path.join(HERE, "data", "errors.json")))["records"]}
# Cases that need features of later issues or that JAX reports at XLA lowering time.
LATER = {
    "lax_reshape_bad": "JAX fails in XLA's verifier, with MLIR source locations",
}


def _error_cases(x64: bool):
    class Lenient:
        """Lets cases.py build its list even when a later-issue function is missing."""
        def __init__(self, module):
            self.module = module

        def __getattr__(self, name):
            return getattr(self.module, name)
    return cases.error_cases(Lenient(jax), Lenient(jnp), Lenient(lax), np, x64=x64)


def _normalise(message: str) -> str:
    message = re.sub(r"0x[0-9a-fA-F?]+", "0x?", message)
    for qualified in ("pyjax._src.core.array.ArrayImpl", "jaxlib._jax.ArrayImpl"):
        message = message.replace(qualified, "ArrayImpl")
    return re.sub(r"\S+\.py:\d+", "FILE:LINE", message)


def _run(thunk):
    try:
        out = thunk()
        if hasattr(out, "block_until_ready"):
            out.block_until_ready()
    except Exception as e:  # noqa: BLE001 - the class is what we check
        return e, None
    return None, out


def _compare(name, record, error, value):
    if name in LATER:
        pytest.skip(LATER[name])
    if record.get("type") is None:
        assert error is None, f"{name}: raised {type(error).__name__}: {error}"
        if "repr" in record:
            assert repr(value) == record["repr"]
        return
    assert error is not None, f"{name}: expected {record['type']}, nothing raised"
    assert type(error).__name__ == record["type"], f"{name}: {type(error).__name__}: {error}"
    expected, got = _normalise(record["message"]), _normalise(str(error))
    got = "\n".join(line for line in got.split("\n") if not line.startswith("To fix it"))
    if record["type"] == "UnexpectedTracerError":  # pyjax fills in what JAX 0.10 leaves empty
        got = re.sub(r"created on line .*\. \n", "created on line . \n", got)
        got = re.sub(r"(were:\n-{30}\n)(.*?)(\n-{30})", r"\1\3", got, flags=re.S)
    if "See https://docs.jax.dev" in expected:
        expected_lines = expected.split("\nSee https://docs.jax.dev")[0].splitlines()
        got_lines = got.split("\nSee https://docs.jax.dev")[0].splitlines()
        got_lines = [line for line in got_lines if not line.startswith("To fix it")]
        assert [l for l in got_lines if l] == [l for l in expected_lines if l]
    else:
        assert got == expected


@pytest.mark.parametrize("name,thunk", _error_cases(False), ids=lambda v: v if isinstance(v, str) else "")
def test_error_matches_jax(name, thunk):
    error, value = _run(thunk)
    _compare(name, RECORDS[(name, False)], error, value)


@pytest.mark.parametrize("name,thunk", _error_cases(True), ids=lambda v: v if isinstance(v, str) else "")
def test_error_matches_jax_x64(name, thunk, x64):
    error, value = _run(thunk)
    _compare(name, RECORDS[(name, True)], error, value)
