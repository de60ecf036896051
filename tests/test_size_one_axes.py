"""`jax.remove_size_one_mesh_axis_from_type`: with it on, mesh axes of size 1 leave types
(`f32[8@x]` for an array split over a (4, 1) mesh's ('x', 'y')), shard_map bodies' varying axes,
with_sharding_constraint's check and psum's axes; off, nothing changes.

Every case is compared with what JAX 0.10.2 gave (tests/data/size_one_axes.json, made by
tests/oracle/record_size_one_axes.py) on 8 forced CPU devices, with the option off and on; the
cases run in a subprocess with XLA_FLAGS=--xla_force_host_platform_device_count=8.
"""
import json
import os

import pytest

from recorded import run_on_devices

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = json.load(open(os.path.join(HERE, "data", "size_one_axes.json")))["devices_8"]

# Where pyjax differs from JAX, each checked to still differ (strict xfail).
GAPS = {
    **{f"shard_map_pmax{v}/on": "JAX's pmax (not psum) keeps a size-1 axis and then rejects "
       "it as one the operand does not vary over, with psum's wording; pyjax reduces over "
       "it, a no-op" for v in ("", "_value")},
}


@pytest.fixture(scope="module")
def results():
    return run_on_devices("record_size_one_axes", "run_all", 8)


@pytest.mark.parametrize("name", sorted(DATA))
def test_matches_jax(request, results, name):
    if name in GAPS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=GAPS[name]))
    assert results[name] == DATA[name]
