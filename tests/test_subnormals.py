"""Subnormals as XLA's CPU code treats them (issue 10, item 9): flushed to zero by arithmetic
(MXCSR's FTZ and DAZ bits, backend/fp_mode.py), kept by copies, bit operations, conversions of
NumPy constants and the operations jit's simplifier removes.  Values recorded from JAX 0.10.2
(tests/oracle/record_subnormals.py); the caller's own NumPy and Python arithmetic keeps IEEE
subnormals before, between and after pyjax calls, in every thread."""
import threading

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.backend import fp_mode
from recorded import load
from oracle.record_subnormals import CASES, CASES_X64, encode

DATA = load("subnormals.json")
ENV = {"jax": jax, "jnp": jnp, "np": np, "lax": lax}

pytestmark = pytest.mark.skipif(not fp_mode.AVAILABLE, reason=f"{fp_mode.UNAVAILABLE}")


def _numpy_keeps_subnormals() -> bool:
    return bool(np.float32(1e-40) * np.float32(1.0) > 0) and 1e-310 * 1.0 > 0


@pytest.mark.parametrize("case", CASES)
def test_like_xla(case: str) -> None:
    assert encode(np, eval(case, ENV)) == DATA["x64_off"][case]
    assert _numpy_keeps_subnormals()


@pytest.mark.parametrize("case", CASES_X64)
def test_like_xla_x64(case: str) -> None:
    with jax.enable_x64(True):
        assert encode(np, eval(case, ENV)) == DATA["x64_on"][case]
    assert _numpy_keeps_subnormals()


def test_flushing_stops_when_an_operation_raises() -> None:
    with pytest.raises(TypeError):
        jnp.add(jnp.float32(1e-40), "a")
    with pytest.raises(TypeError):
        jax.lax.add(jnp.ones(3), jnp.ones(4))
    assert _numpy_keeps_subnormals()


def test_callbacks_flush_where_jax_runs_them_in_xla() -> None:
    """JAX 0.10.2: an eager debug.callback runs in Python (subnormals kept); one inside a jitted
    program, and an eager pure_callback (dispatched as an XLA program), run flushed."""
    def keeps() -> bool:
        return bool(np.float32(1e-40) * np.float32(1.0) > 0)

    seen: list = []
    jax.debug.callback(lambda x: seen.append(keeps()), 1.0)
    jax.jit(lambda x: jax.debug.callback(lambda x: seen.append(keeps()), x))(1.0)
    pure = jax.pure_callback(lambda x: np.float32(1e-40) * np.float32(1.0) + x * 0,
                             jax.ShapeDtypeStruct((), jnp.float32), 1.0)
    assert seen == [True, False] and float(pure) == 0.0
    assert _numpy_keeps_subnormals()


def test_threads_switch_their_own_register() -> None:
    x = jnp.full(1000, 1e-40, jnp.float32)
    errors: list = []

    def numpy_user() -> None:
        for _ in range(2000):
            if not _numpy_keeps_subnormals():
                errors.append("numpy flushed")

    def pyjax_user() -> None:
        for _ in range(500):
            if float(jnp.sum(x * 1)) != 0.0:
                errors.append("pyjax kept")

    threads = [threading.Thread(target=f) for f in (numpy_user, pyjax_user) * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_machine_code_switches() -> None:
    a = np.float32([1e-40])
    assert fp_mode.flush_on(fp_mode.KEPT) is fp_mode.SWITCHED
    try:
        assert fp_mode.flush_on(fp_mode.KEPT) is fp_mode.KEPT  # nested: already on
        assert a[0] * np.float32(1) == 0 and not a > 0
    finally:
        fp_mode.flush_off()
    assert a[0] * np.float32(1) > 0


def test_a_thread_started_inside_an_operation_keeps_subnormals(monkeypatch) -> None:
    """New threads inherit the CPU's mode (checked first); pyjax's compile thread, which may
    start inside an eager operation, clears what it inherited (a fresh worker and queue are
    put in place so the test starts one)."""
    import queue
    from pyjax._src.backend.tier1 import engine

    def in_new_thread(fn) -> list:
        seen: list = []
        thread = threading.Thread(target=lambda: seen.append(fn()))
        thread.start()
        thread.join()
        return seen

    monkeypatch.setattr(engine, "_worker", None)
    monkeypatch.setattr(engine, "_jobs", queue.Queue())
    seen: list = []
    assert fp_mode.flush_on(fp_mode.KEPT) is fp_mode.SWITCHED
    try:
        assert in_new_thread(_numpy_keeps_subnormals) == [False]  # inherited flushing
        engine.submit(lambda: seen.append(_numpy_keeps_subnormals()))
    finally:
        fp_mode.flush_off()
    engine.wait()
    assert seen == [True]
