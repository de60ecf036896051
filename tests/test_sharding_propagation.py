"""jit results laid out as JAX lays them out when the arguments are sharded over a mesh
(parallel/propagation.py), against shardings recorded from JAX 0.10.2
(tests/oracle/record_propagation.py) on Auto and Explicit mesh axes.  The cases run in one
subprocess with 8 CPU devices."""
from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "propagation.json")) as f:
    CASES = json.load(f)["cases"]

SCRIPT = """
import json, sys
import numpy as np
import pyjax, pyjax.numpy as jnp
from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P
assert len(pyjax.devices()) == 8
results = {}
for case in json.loads(sys.stdin.read()):
    mesh = pyjax.make_mesh((2, 4), ("x", "y"), axis_types=(getattr(AxisType, case["axis_types"]),) * 2)
    args = {"a": pyjax.device_put(np.arange(64.0, dtype=np.float32).reshape(8, 8),
                                  NamedSharding(mesh, P("x", "y"))),
            "b": pyjax.device_put(np.arange(8.0, dtype=np.float32), NamedSharding(mesh, P("x"))),
            "c": pyjax.device_put(np.arange(8.0, dtype=np.float32), NamedSharding(mesh, P()))}
    f = pyjax.jit(eval(case["source"], {"jnp": jnp}))
    out = f(*[args[n] for n in case["args"]])
    ref = eval(case["source"], {"jnp": np})(*[np.asarray(args[n]) for n in case["args"]])
    same = all(np.allclose(np.asarray(o), r) for o, r in zip(pyjax.tree.leaves(out),
                                                           pyjax.tree.leaves(ref)))
    results[case["axis_types"] + "-" + case["name"]] = {
        "shardings": [str(o.sharding) for o in pyjax.tree.leaves(out)],
        "committed": all(o.committed for o in pyjax.tree.leaves(out)), "values": same}
plain = pyjax.jit(lambda x: x * 2)(np.arange(4.0))
results["unsharded"] = {"shardings": [str(plain.sharding)]}
print(json.dumps(results))
"""


def _id(case: dict) -> str:
    return f"{case['axis_types']}-{case['name']}"


@functools.lru_cache(maxsize=None)
def _results() -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYJAX_NUM_CPU_DEVICES"}
    env["PYJAX_NUM_CPU_DEVICES"] = "8"
    cases = [c for c in CASES if "error" not in c]
    proc = subprocess.run([sys.executable, "-c", SCRIPT], input=json.dumps(cases), env=env,
                          capture_output=True, text=True, cwd=os.path.dirname(HERE))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_jit_result_sharding(case):
    if "error" in case:  # JAX's sharding-in-types refuses these on Explicit axes
        pytest.skip(f"JAX raises {case['error']} here; pyjax does not check sharding types")
    got = _results()[_id(case)]
    assert got["shardings"] == case["shardings"]
    assert got["committed"] and got["values"]


def test_unsharded_arguments_stay_on_the_default_device():
    assert _results()["unsharded"]["shardings"][0].startswith("SingleDeviceSharding")


def test_arrays_computed_under_a_mesh_live_on_it():
    """Under `set_mesh` new arrays are laid out on the mesh, replicated (JAX's P(None,) on
    Explicit axes, P() on Auto ones), in this thread only, and no longer after leaving."""
    import threading

    import numpy as np

    import pyjax
    import pyjax.numpy as jnp
    from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P
    explicit = pyjax.make_mesh((1,), ("x",), axis_types=(AxisType.Explicit,))
    auto = pyjax.make_mesh((1,), ("x",), axis_types=(AxisType.Auto,))
    elsewhere = []
    with pyjax.set_mesh(explicit):
        x = jnp.arange(3.0)
        y = pyjax.jit(lambda v: v * 2)(x)
        thread = threading.Thread(target=lambda: elsewhere.append(jnp.ones(2).sharding))
        thread.start()
        thread.join()
    with pyjax.set_mesh(auto):
        z = jnp.zeros((2, 2)) + 1
    after = jnp.arange(3.0)
    assert x.sharding == NamedSharding(explicit, P(None)) and str(x.sharding.spec) == "P(None,)"
    assert y.sharding == NamedSharding(explicit, P(None))
    assert z.sharding == NamedSharding(auto, P())
    assert type(elsewhere[0]).__name__ == "SingleDeviceSharding"
    assert type(after.sharding).__name__ == "SingleDeviceSharding"
    np.testing.assert_array_equal(np.asarray(y), [0.0, 2.0, 4.0])
