"""jax.experimental.layout: formats, layouts and constraints as JAX 0.10.2 prints and checks
them (the expected texts are JAX's outputs for the same calls)."""
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.experimental.layout import Format, Layout, with_layout_constraint


def test_array_format_is_row_major_on_its_device():
    assert repr(jnp.ones((2, 3)).format) == (
        "Format(layout=Layout(major_to_minor=(0, 1), tiling=(), sub_byte_element_size_in_bits=0),"
        " sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device))")
    assert jnp.ones(()).format.layout == Layout((), ())


def test_format_reprs_equality_and_errors():
    assert repr(Format()) == "Format(layout=None, sharding=None)"
    assert repr(Layout.AUTO) == "AUTO"
    assert Layout((0, 1)) == Layout((0, 1)) and hash(Layout((1, 0))) == hash(Layout((1, 0)))
    with pytest.raises(ValueError, match="Sharding has to be concrete when layout is of type"):
        Format(Layout((1, 0)))
    with pytest.raises(TypeError, match="Invalid value received for the layout argument"):
        Format(jnp.ones(2).sharding)


def test_layout_constraint_keeps_values_and_checks_rank():
    x = jnp.arange(6.0).reshape(2, 3)
    assert (pyjax.jit(lambda v: with_layout_constraint(v, Layout((0, 1))))(x) == x).all()
    with pytest.raises(ValueError, match=r"Length of major_to_minor and the rank of the value "
                                         r"should match. Got major_to_minor=\(0, 1\) and "
                                         r"shape=\(2,\)"):
        Layout((0, 1)).check_compatible_aval((2,))
