"""Small top-level functions and options of JAX 0.10.2 (checked against JAX by hand: same
values and defaults): effects_barrier, copy_to_host_async, process_indices, and the options
jax2tf_associative_scan_reductions (a context manager with `.value`)."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp


def test_process_indices_lists_the_one_process() -> None:
    assert pyjax.process_indices() == [0] == list(range(pyjax.process_count()))


def test_effects_barrier_after_callbacks() -> None:
    seen: list = []
    pyjax.jit(lambda x: pyjax.debug.callback(seen.append, x) or x)(jnp.arange(2))
    assert pyjax.effects_barrier() is None
    np.testing.assert_array_equal(np.asarray(seen[0]), [0, 1])


def test_copy_to_host_async_returns_the_tree() -> None:
    calls: list = []

    class Leaf:
        def copy_to_host_async(self) -> None:
            calls.append(self)

    tree = {"a": jnp.ones(2), "b": 1, "c": [Leaf()]}
    assert pyjax.copy_to_host_async(tree) is tree
    assert calls == [tree["c"][0]]


@pytest.mark.parametrize("name,option", [
    ("jax2tf_associative_scan_reductions", "jax2tf_associative_scan_reductions")])
def test_boolean_options(name: str, option: str) -> None:
    state = getattr(pyjax, name)
    assert state.value is False and getattr(pyjax.config, option) is False
    with state(True):
        assert state.value is True and getattr(pyjax.config, option) is True
    with state():  # no argument: True, as JAX's boolean options
        assert state.value is True
    assert state.value is False
    pyjax.config.update(option, True)
    try:
        assert state.value is True
    finally:
        pyjax.config.update(option, False)
