"""pyjax.Array: immutability, NumPy interop, repr/str like JAX (tests/data/reprs.json)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "oracle"))
import cases  # noqa: E402

REPRS = {(r["name"], r["x64"]): r
         for r in json.load(open(os.path.join(HERE, "data", "reprs.json")))["records"]}
# XLA's CPU backend contracts a*b+c into a fused multiply-add inside jitted jnp functions
# (linspace here), changing the last bit of some values; pyjax's backend does not emulate FMA.
NEEDS_FMA = {"float32_2d_long_rows": "XLA CPU fuses multiply-add (FMA) inside jnp.linspace"}


@pytest.mark.parametrize("name,thunk", cases.repr_cases(jnp, np), ids=lambda v: v if isinstance(v, str) else "")
def test_repr_and_str_match_jax(name, thunk):
    if name in NEEDS_FMA:
        pytest.skip(NEEDS_FMA[name])
    record = REPRS[(name, False)]
    x = thunk()
    assert repr(x) == record["repr"]
    assert str(x) == record["str"]
    assert x.weak_type == record["weak_type"]


@pytest.mark.parametrize("name,thunk", cases.repr_cases(jnp, np, x64=True), ids=lambda v: v if isinstance(v, str) else "")
def test_repr_and_str_match_jax_x64(name, thunk, x64):
    record = REPRS[(name, True)]
    x = thunk()
    assert repr(x) == record["repr"] and str(x) == record["str"]


def test_np_asarray_is_zero_copy_and_read_only():
    x = jnp.arange(5)
    a = np.asarray(x)
    assert np.shares_memory(a, np.asarray(x))
    with pytest.raises(ValueError):
        a[0] = 1


def test_numpy_input_is_copied():
    base = np.arange(3.0, dtype=np.float32)
    x = jnp.asarray(base)
    base[0] = 100
    assert float(x[0]) == 0.0


def test_arrays_are_immutable_and_unhashable():
    x = jnp.arange(3)
    with pytest.raises(TypeError, match=r"\.at\[idx\]\.set"):
        x[0] = 1
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)


def test_array_is_the_common_base_of_arrays_and_tracers():
    assert isinstance(jnp.ones(2), jax.Array)
    seen = []
    jax.make_jaxpr(lambda x: seen.append(isinstance(x, jax.Array)) or x)(1.0)
    assert seen == [True]


def test_overflowing_python_ints_raise():
    with pytest.raises(OverflowError, match="too large to convert to int32"):
        jnp.array(2 ** 40)


def test_devices_and_block_until_ready():
    x = jnp.ones(3)
    assert x.block_until_ready() is x
    assert x.devices() == {jax.devices()[0]}
    tree = {"a": x, "b": [jnp.zeros(1)]}
    assert jax.block_until_ready(tree) is tree
    assert isinstance(jax.device_get(tree)["a"], np.ndarray)
    assert isinstance(jax.device_put(np.ones(2)), jax.Array)
    assert jax.device_count() == jax.local_device_count() == len(jax.local_devices()) >= 1


def _run(code: str, **env: str) -> str:
    full_env = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=full_env, check=True).stdout.strip()


def test_x64_from_environment_and_device_count_from_xla_flags():
    code = "import pyjax.numpy as jnp, pyjax; print(jnp.ones(1).dtype, pyjax.device_count())"
    assert _run(code, JAX_ENABLE_X64="1",
                XLA_FLAGS="--xla_force_host_platform_device_count=4") == "float64 4"
    assert _run(code, JAX_ENABLE_X64="0") == "float32 1"


def test_alias_as_jax_makes_import_jax_resolve_to_pyjax():
    code = ("import pyjax; pyjax.alias_as_jax(); import jax, jax.numpy as jnp; "
            "from jax import lax; print(jax is pyjax, jnp.ones(2).dtype, lax.add.__module__)")
    assert _run(code) == "True float32 pyjax._src.primitives.elementwise"
