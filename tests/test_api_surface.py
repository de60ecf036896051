"""Issue 13 groundwork: top-level names, config options, dtypes and Array methods that optax,
chex, flax and equinox use, checked against values and messages recorded from JAX 0.10.2."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.flatten_util import ravel_pytree


# -- dtypes: key dtypes are extended dtypes ----------------------------------------------------
def test_key_dtype_hierarchy():
    k = jax.random.key(0)
    assert k.dtype.type is jax.dtypes.prng_key
    assert jax.dtypes.prng_key.__mro__[1:3] == (jax.dtypes.extended, np.generic)
    assert jnp.issubdtype(k.dtype, jax.dtypes.prng_key)
    assert jnp.issubdtype(k.dtype, jax.dtypes.extended)
    assert jnp.issubdtype(k.dtype, k.dtype)
    assert jnp.issubdtype(k.dtype, np.generic)
    assert not jnp.issubdtype(k.dtype, np.integer)
    assert not jnp.issubdtype(jnp.float32, jax.dtypes.extended)
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating)


# -- config options ------------------------------------------------------------------------------
JAX_DEFAULTS = {  # recorded from jax.config in JAX 0.10.2
    "jax_explain_cache_misses": False, "jax_default_device": None,
    "jax_check_tracer_leaks": False, "jax_transfer_guard": None,
    "jax_enable_custom_prng": False, "jax_legacy_prng_key": "allow",
    "jax_debug_key_reuse": False, "jax_enable_compilation_cache": True,
    "jax_compilation_cache_dir": None, "jax_persistent_cache_min_compile_time_secs": 1.0,
    "jax_persistent_cache_min_entry_size_bytes": 0, "jax_raise_persistent_cache_errors": False,
    "jax_no_tracing": False, "jax_no_execution": False,
}


@pytest.mark.parametrize("name", sorted(JAX_DEFAULTS))
def test_config_defaults(name):
    assert getattr(jax.config, name) == JAX_DEFAULTS[name]
    assert jax.config.values[name] == JAX_DEFAULTS[name]


@pytest.mark.parametrize("name,value,message", [
    ("jax_transfer_guard", "bogus", "new enum value must be None or in ['allow', 'log', "
     "'disallow', 'log_explicit', 'disallow_explicit'], got bogus of type <class 'str'>."),
    ("jax_legacy_prng_key", "bogus", "'bogus' is not a valid LegacyPrngKeyState"),
    ("jax_numpy_dtype_promotion", "bogus", "'bogus' is not a valid NumpyDtypePromotion"),
    ("jax_default_device", 3, "jax.default_device must be passed either a Device object (e.g. "
     "`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or 'gpu', got: 3"),
])
def test_config_validation(name, value, message):
    with pytest.raises(ValueError) as info:
        jax.config.update(name, value)
    assert str(info.value) == message


def test_legacy_prng_key_is_enum():
    with jax.legacy_prng_key("warn"):
        assert repr(jax.config.jax_legacy_prng_key) == "<LegacyPrngKeyState.WARN: 'warn'>"
    assert jax.config.jax_legacy_prng_key == "allow"


def test_transfer_guard_sets_every_direction():
    with jax.transfer_guard("disallow"):
        assert (jax.transfer_guard_host_to_device.value, jax.transfer_guard_device_to_host.value,
                jax.transfer_guard_device_to_device.value) == ("disallow",) * 3
    assert jax.transfer_guard_host_to_device.value is None


@pytest.mark.parametrize("name", [
    "debug_nans", "debug_infs", "debug_key_reuse", "log_compiles", "softmax_custom_jvp",
    "explain_cache_misses", "check_tracer_leaks", "enable_custom_prng", "no_tracing",
    "no_execution"])
def test_bool_states_default_to_true_in_context(name):
    state = getattr(jax, name)
    with state():
        assert state.value is True
    assert state.value is False


@pytest.mark.parametrize("name", [
    "legacy_prng_key", "default_device", "numpy_dtype_promotion", "default_matmul_precision",
    "transfer_guard_host_to_device"])
def test_states_requiring_a_value(name):
    with pytest.raises(TypeError, match=f"Context manager for {name} config option requires an "
                       "argument representing the new value for the config option."):
        getattr(jax, name)()


def test_checking_leaks():
    with jax.checking_leaks():
        assert jax.config.jax_check_tracer_leaks
    assert not jax.config.jax_check_tracer_leaks


def test_no_tracing_and_no_execution():
    def f(x):
        return x * 2
    g = jax.jit(f)
    line = f.__code__.co_firstlineno
    msg = f"re-tracing function f at {__file__}:{line} for `jit`, but 'no_tracing' is set"
    with jax.no_tracing(), pytest.raises(RuntimeError) as info:
        g(1.0)
    assert str(info.value) == msg
    assert g(1.0) == 2.0
    with jax.no_tracing(), pytest.raises(RuntimeError):  # as JAX: the context keys the cache
        g(1.0)
    with jax.no_execution(), pytest.raises(RuntimeError) as info:
        g(2.0)
    assert str(info.value) == ("JAX tried to execute function jit(f), but the no_execution "
                               "config option is set")


# -- top-level names -----------------------------------------------------------------------------
def test_version_info_and_scopes():
    assert jax.__version_info__ == (0, 10, 2)
    with pytest.raises(TypeError, match="named_scope name argument must be a string."):
        with jax.named_scope(3):
            pass

    def f(x):
        return jnp.sin(x) * 2
    g = jax.named_call(f, name="foo")
    assert g.__name__ == "f" and g.__wrapped__ is f
    assert str(jax.make_jaxpr(g)(1.0)) == (
        "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b 2.0:f32[] in (c,) }")
    info = jax.print_environment_info(return_string=True)
    assert "jax:    0.10.2" in info and "1 local devices" in info
    x = jnp.ones(3)
    assert any(a is x for a in jax.live_arrays())
    assert jax.typing.ArrayLike and jax.typing.DTypeLike


# -- ravel_pytree: values and dtypes recorded from JAX 0.10.2 -------------------------------------
RAVEL_CASES = [
    ({"a": 1, "b": 2.0}, "float32", [1.0, 2.0], [("int32", 1), ("float32", 2.0)]),
    ([jnp.arange(3), jnp.ones((2, 2))], "float32", [0, 1, 2, 1, 1, 1, 1],
     [("int32", [0, 1, 2]), ("float32", [[1.0, 1.0], [1.0, 1.0]])]),
    ((np.ones(2), jnp.zeros(1, jnp.bfloat16)), "float32", [1, 1, 0],
     [("float32", [1.0, 1.0]), ("bfloat16", [0.0])]),
    ({"x": jnp.ones(2, jnp.float16), "y": (jnp.zeros((1, 3), jnp.float16),)}, "float16",
     [1, 1, 0, 0, 0], [("float16", [1.0, 1.0]), ("float16", [[0.0, 0.0, 0.0]])]),
    ({}, "float32", [], []),
    ([jnp.array([True]), jnp.array([3], jnp.uint8)], "uint8", [1, 3],
     [("bool", [True]), ("uint8", [3])]),
    ([jnp.array([1 + 2j], jnp.complex64), jnp.array([1.0])], "complex64", [1 + 2j, 1],
     [("complex64", [1 + 2j]), ("float32", [1.0])]),
]


@pytest.mark.parametrize("tree,dtype,flat_values,leaves", RAVEL_CASES)
def test_ravel_pytree(tree, dtype, flat_values, leaves):
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == dtype and flat.shape == (len(flat_values),)
    np.testing.assert_array_equal(np.asarray(flat), np.asarray(flat_values, dtype))
    out = jax.tree.leaves(unravel(flat))
    assert [(str(x.dtype), np.asarray(x).tolist()) for x in out] == leaves
    assert jax.tree.structure(unravel(flat)) == jax.tree.structure(tree)


def test_unravel_dtype_rules():
    flat, unravel = ravel_pytree([jnp.arange(3), jnp.ones(2)])
    with pytest.raises(TypeError, match="unravel function given array of dtype int32, but "
                       "expected dtype float32"):
        unravel(flat.astype(jnp.int32))
    _, unravel = ravel_pytree([jnp.ones(2, jnp.float16)])  # one dtype: polymorphic
    assert unravel(jnp.arange(2.0))[0].dtype == jnp.float32
    assert ravel_pytree([jnp.ones(2)])[1] == ravel_pytree([jnp.zeros(2)])[1]


# -- Array methods and device properties ----------------------------------------------------------
def test_array_methods_forward_to_jnp():
    x = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(x.take(jnp.array([0, 4])), [0.0, 4.0])
    np.testing.assert_array_equal(x.diagonal(), [0.0, 4.0])
    assert x.trace() == 4.0
    assert jnp.array([1, 3, 5]).searchsorted(4) == 2
    np.testing.assert_array_equal(jnp.array([3, 1, 2]).argpartition(1), [1, 2, 0])
    np.testing.assert_array_equal(jnp.array([0, 1]).choose([jnp.array([5, 6]),
                                                            jnp.array([7, 8])]), [5, 8])
    np.testing.assert_array_equal(jnp.array([1, 2, 3]).compress(jnp.array([True, False, True])),
                                  [1, 3])
    assert x.tobytes() == np.arange(6, dtype=np.float32).reshape(2, 3).tobytes()
    with pytest.raises(NotImplementedError, match="JAX Arrays do not implement the arr.flat "
                       "property: consider arr.flatten"):
        x.flat


@pytest.mark.parametrize("x,dtype", [
    (np.arange(6, dtype=np.float32).reshape(2, 3), np.int32),
    (np.array([1, 0, 1], np.int8), np.bool_),
    (np.array([1 + 2j], np.complex64), np.float32),
    (np.ones(4, np.int8), np.int32),
    (np.ones(1, np.int32), np.uint8),
    (np.array([1.5, 2.5], np.float32), np.complex64),
    (np.array([1, 2], np.uint16), np.float16),
    (np.array([1.0, 2.0], np.float32), np.uint16),
])
def test_view_matches_numpy(x, dtype):
    out = jnp.asarray(x).view(dtype)
    assert out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(out), x.view(dtype))


def test_view_errors_and_byteswap():
    with pytest.raises(ValueError, match="view\\(\\) of a 0d array is only supported if the "
                       "itemsize is unchanged."):
        jnp.ones((), jnp.float32).view(jnp.int16)
    with pytest.raises(ValueError, match="When changing to a larger dtype, its size must be a "
                       "divisor of the total size in bytes of the last axis of the array."):
        jnp.ones((3,), jnp.int8).view(jnp.int16)
    assert jnp.ones((), jnp.float32).view(jnp.int32) == 1065353216
    for a in (np.arange(3, dtype=np.int16), np.array([1.0, 2.0], np.float32),
              np.array([1 + 2j], np.complex64), np.array([7], np.uint8)):
        np.testing.assert_array_equal(np.asarray(jnp.asarray(a).byteswap()), a.byteswap())


def test_single_device_array_properties():
    x = jnp.arange(6.0).reshape(2, 3)
    (shard,) = x.addressable_shards
    assert shard.device == jax.devices()[0] and shard.replica_id == 0
    assert shard.index == (slice(None), slice(None)) and shard.data is x
    assert x.global_shards[0].data is x and x.addressable_data(0) is x
    assert x.platform() == "cpu" and x.on_device_size_in_bytes() == 24
    assert x.unsafe_buffer_pointer() == np.asarray(x).ctypes.data
    assert not x.committed and not jax.device_put(x).committed
    assert jax.device_put(x, jax.devices()[0]).committed
