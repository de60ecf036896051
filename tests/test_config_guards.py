"""The top-level option context managers JAX 0.10.2 added: allow_f16_reductions, auto_pcast,
array_garbage_collection_guard, thread_guard; the texts are JAX's (run under /work/oracle)."""
from __future__ import annotations

import gc
import logging
import threading

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax


def test_allow_f16_reductions() -> None:
    assert pyjax.allow_f16_reductions.value is True
    with pyjax.allow_f16_reductions(False):
        assert pyjax.config.jax_allow_f16_reductions is False
        with pytest.raises(ValueError) as info:
            lax.reduce_sum(jnp.ones(3, jnp.float16), (0,))
        assert str(info.value) == ("reduce_sum on operand f16[3] is not allowed when "
                                   "jax_allow_f16_reductions=False.")
        with pytest.raises(ValueError, match=r"operand bf16\[3,1\] is not allowed"):
            pyjax.jit(lambda x: lax.reduce_sum(x, (0, 1)))(jnp.ones((3, 1), jnp.bfloat16))
        # reducing axes of size 1 only is allowed; jnp.sum accumulates in float32 (as JAX)
        np.testing.assert_array_equal(lax.reduce_sum(jnp.ones((3, 1), jnp.bfloat16), (1,)),
                                      np.ones(3))
        assert float(jnp.sum(jnp.ones(3, jnp.float16))) == 3.0
    assert float(lax.reduce_sum(jnp.ones(3, jnp.float16), (0,))) == 3.0


def test_allow_f16_reductions_keys_the_jit_cache() -> None:
    f = pyjax.jit(lambda x: lax.reduce_sum(x, (0,)))
    x = jnp.ones(4, jnp.float16)
    assert float(f(x)) == 4.0
    with pyjax.allow_f16_reductions(False), pytest.raises(ValueError):
        f(x)


def test_auto_pcast_off_is_jax_error() -> None:
    mesh = pyjax.make_mesh((1,), ("i",), axis_types=(pyjax.sharding.AxisType.Auto,))
    f = pyjax.shard_map(lambda a: a * 2, mesh=mesh, in_specs=pyjax.P("i"),
                        out_specs=pyjax.P("i"))
    x = jnp.arange(4.0)
    assert "pvary[axes=('i',)] 2.0:f32[]" in str(pyjax.make_jaxpr(f)(x))
    with pyjax.auto_pcast(False):
        assert pyjax.auto_pcast.value is False
        with pytest.raises(ValueError) as info:
            pyjax.make_jaxpr(f)(x)
    assert str(info.value) == (
        "Primitive mul requires varying manual axes to match, but got [frozenset({'i'}), "
        "frozenset()]. Please open an issue at https://github.com/jax-ml/jax/issues and as a "
        "temporary workaround pass the check_vma=False argument to `jax.shard_map`")
    assert pyjax.auto_pcast.value is True


def _cyclic_array_garbage() -> None:
    class Holder:
        pass
    h = Holder()
    h.me, h.x = h, jnp.ones(3)


def test_array_garbage_collection_guard_logs(caplog) -> None:
    from pyjax._src.core.array import ArrayImpl
    gc.collect()
    with pytest.raises(ValueError, match=r"must be None or in \['allow', 'log', 'fatal'\]"):
        pyjax.config.update("jax_array_garbage_collection_guard", "bad")
    with caplog.at_level(logging.ERROR, logger="pyjax"):
        with pyjax.array_garbage_collection_guard("log"):
            assert "__del__" in ArrayImpl.__dict__
            y = jnp.ones(2)
            del y  # freed by reference counting: nothing logged
            assert not caplog.records
            _cyclic_array_garbage()
            gc.collect()
        assert "__del__" not in ArrayImpl.__dict__  # no cost once no setting guards
        _cyclic_array_garbage()
        gc.collect()  # guard off again: nothing more logged
    messages = [r.getMessage() for r in caplog.records]
    assert messages == ["RuntimeError: `jax.Array` was deleted by the Python garbage collector "
                        "instead of reference counting. Break the reference cycle that delays "
                        "the deletion of this `jax.Array` to avoid hogging memory."]


def test_thread_guard() -> None:
    from pyjax._src import thread_guard
    thread_guard.check()  # no guard: any thread may
    errors = []

    def other() -> None:
        try:
            thread_guard.check()
        except RuntimeError as e:
            errors.append(str(e))
        try:
            with pyjax.thread_guard(True):
                pass
        except RuntimeError as e:
            errors.append(str(e))

    with pyjax.thread_guard(True):
        assert pyjax.thread_guard.value is True
        thread_guard.check()  # the guarding thread may
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert errors[0] == (f"A multi-process JAX operation was called from thread {t.ident}. This "
                         "is not allowed because the thread guard was set in thread "
                         f"{threading.get_ident()}.")
    assert errors[1] == ("The thread guard's global thread ID is already set. Nested thread "
                         "guards in different threads are not supported.")
    assert thread_guard.guard_thread is None
    thread_guard.check()


def test_process_collectives_check_the_thread_guard() -> None:
    """The process-level primitives' impls check the guard before touching the transport."""
    from pyjax._src.parallel import distributed
    x = np.ones(2, np.float32)
    failures = []

    def other() -> None:
        try:
            distributed.process_allreduce_p.impl(x, op="sum", collective="psum")
        except RuntimeError as e:
            failures.append(str(e))
    with pyjax.thread_guard(True):
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert failures and failures[0].startswith("A multi-process JAX operation was called")
