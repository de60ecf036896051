"""`jax.memory.Space` and memory spaces in types on CPU: avals' `memory_space` (printed
`f32<host>[4]`, part of equality), device_put to a 'pinned_host' sharding (typed and staged in
host memory, results of operations on it too), references made with a memory space.

Every case is compared with what JAX 0.10.2 gave (tests/data/memory_space.json, made by
tests/oracle/record_memory_space.py), run in a subprocess with one forced CPU device.
"""
import json
import os

import pytest

from recorded import run_on_devices

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = json.load(open(os.path.join(HERE, "data", "memory_space.json")))["records"]


@pytest.fixture(scope="module")
def results():
    return run_on_devices("record_memory_space", "run_all", 1)


@pytest.mark.parametrize("name", sorted(DATA))
def test_matches_jax(results, name):
    assert results[name] == DATA[name]


def test_device_types_unchanged():
    """A type in device memory hashes, compares and prints as before memory spaces."""
    import numpy as np
    from pyjax._src.core.avals import MemorySpace, ShapedArray
    a = ShapedArray((2, 3), np.float32)
    assert a.memory_space is MemorySpace.Device
    assert hash(a) == hash(((2, 3), np.dtype(np.float32), False))
    assert a == a.update(memory_space=MemorySpace.Device)
    assert a.str_short(short_dtypes=True) == "f32[2,3]"
    host = a.update(memory_space=MemorySpace.Host)
    assert host != a and hash(host) != hash(a)
    assert host.str_short(short_dtypes=True) == "f32<host>[2,3]"


def test_jit_traces_host_arguments_apart():
    """A jitted function traced for an argument in device memory is traced again for one in
    host memory (their types differ), as JAX's cache keys by the type."""
    import pyjax as jax
    import pyjax.numpy as jnp
    from pyjax.sharding import SingleDeviceSharding
    f = jax.jit(lambda a: a * 2)
    x = jnp.arange(4.0)
    host = jax.device_put(x, SingleDeviceSharding(jax.devices()[0], memory_kind="pinned_host"))
    assert str(f.trace(x).jaxpr.in_avals[0]) == "float32[4]"
    assert str(f.trace(host).jaxpr.in_avals[0]) == "float32<host>[4]"
    assert f(host).tolist() == [0.0, 2.0, 4.0, 6.0]
