"""pmap over 4 local CPU devices (a subprocess sets PYJAX_NUM_CPU_DEVICES=4): results of the
collectives equal what JAX 0.10.2 computed with 4 forced devices (tests/data/pmap.json, made by
tests/oracle/record_pmap.py); device placement and JAX's error for too few devices."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "oracle"))
from record_pmap import CASES  # noqa: E402

RECORDS = {r["name"]: r for r in json.load(open(os.path.join(HERE, "data", "pmap.json")))["records"]}

SCRIPT = """
import json, sys
import numpy as np
import pyjax as jax, pyjax.numpy as jnp
from pyjax import lax
cases = json.loads(sys.argv[1])
x = jnp.arange(12.0).reshape(4, 3)
out = {}
for name, src in cases.items():
    y = jax.pmap(eval(src, {"lax": lax, "jnp": jnp}), axis_name="i")(x)
    out[name] = {"dtype": str(y.dtype), "shape": list(y.shape), "data": np.asarray(y).ravel().tolist(),
                 "devices": sorted(d.id for d in y.devices())}
out["count"] = jax.local_device_count()
try:
    jax.pmap(lambda v: v)(jnp.ones((5, 2)))
    out["too_many"] = "NoError"
except ValueError as e:
    out["too_many"] = "ValueError"
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def results():
    env = dict(os.environ, PYJAX_NUM_CPU_DEVICES="4")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(CASES)], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


@pytest.mark.parametrize("name", sorted(CASES))
def test_collective_matches_jax(results, name):
    got, expected = results[name], RECORDS[name]
    assert (got["dtype"], got["shape"]) == (expected["dtype"], expected["shape"])
    np.testing.assert_allclose(got["data"], expected["data"], rtol=1e-6)
    assert got["devices"] == [0, 1, 2, 3]


def test_device_count_and_too_many_slices(results):
    assert results["count"] == 4
    assert results["too_many"] == "ValueError"
