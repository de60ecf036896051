"""jax.shard_map on 8 local CPU devices (a 4 x 2 mesh): values, jaxprs (check_vma=False) and
errors of the cases in tests/oracle/record_shard_map.py against JAX 0.10.2's recording
(tests/data/shard_map.json).  The cases run in one subprocess with
XLA_FLAGS=--xla_force_host_platform_device_count=8."""
import os
import re
import subprocess
import sys

import pytest

from recorded import check_value, load, run_on_devices

DATA = load("shard_map.json")


@pytest.fixture(scope="module")
def results():
    return {r["name"]: r for r in run_on_devices("record_shard_map", "run_all", 8)}


@pytest.mark.parametrize("want", DATA["records"], ids=lambda r: r["name"])
def test_case(results, want):
    got = results[want["name"]]
    if "error" in want:
        assert "error" in got, f"expected {want['error']['type']}, got a value"
        assert got["error"]["type"] == want["error"]["type"]
        assert _sets_sorted(got["error"]["message"]) == _sets_sorted(want["error"]["message"])
        return
    assert "error" not in got, got.get("error")
    check_value(_arrays(got["value"]), want["value"])
    if "jaxpr" in want:
        assert got["jaxpr"] == want["jaxpr"], f"\n--- pyjax\n{got['jaxpr']}\n--- JAX\n{want['jaxpr']}"


def _sets_sorted(message):
    """Sets of axis names print in hash order, which differs between processes."""
    return re.sub(r"\{('[^{}]*')\}", lambda m: "{" + ", ".join(sorted(
        m.group(1).split(", "))) + "}", message)


def _arrays(v):
    import numpy as np
    if isinstance(v, list):
        return [_arrays(e) for e in v]
    return np.array(v["values"], dtype=v["dtype"]).reshape(v["shape"])


def test_decorator_form_and_context_mesh():
    """`shard_map(out_specs=..., in_specs=...)` used as a decorator, with the mesh from
    `jax.set_mesh`, and in_specs inferred from a placed argument's sharding."""
    code = """
import numpy as np, pyjax as jax, pyjax.numpy as jnp
from pyjax.sharding import PartitionSpec as P, NamedSharding, Mesh
mesh = Mesh(np.array(jax.devices()), ("i",))
with jax.set_mesh(mesh):
    @jax.shard_map(in_specs=P("i"), out_specs=P())
    def total(x):
        return jax.lax.psum(x.sum(), "i")
    print(float(total(jnp.arange(8.0))))
x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("i")))
y = jax.shard_map(lambda b: b * jax.lax.axis_index("i"), mesh=mesh, out_specs=P("i"))(x)
print(np.asarray(y).tolist(), y.sharding.spec)
"""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4")
    env.pop("PYJAX_NUM_CPU_DEVICES", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.splitlines() == [
        "28.0", "[0.0, 0.0, 2.0, 3.0, 8.0, 10.0, 18.0, 21.0] P('i',)"]
