"""JAX's extension API (jax.extend, jax.interpreters, jax.api_util, jax.custom_derivatives,
jax._src mappings) under the alias: library-style programs give what JAX 0.10.2 gave."""
import json
import os
import sys

import numpy as np
import pytest

import pyjax
from programs import extension_api

DATA = os.path.join(os.path.dirname(__file__), "data", "extension_api.json")
EXPECTED = json.load(open(DATA))


@pytest.fixture(scope="module")
def jax():
    """`jax` resolving to pyjax for this module's tests only."""
    from pyjax._src.alias import _AliasFinder
    pyjax.alias_as_jax()
    import jax as aliased
    yield aliased
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _AliasFinder)]
    for name in [n for n in sys.modules if n == "jax" or n.startswith("jax.")]:
        del sys.modules[name]


def _compare(got, want, where):
    if isinstance(want, dict) and "dtype" in want:
        assert got["dtype"] == want["dtype"] and got["shape"] == want["shape"], where
        np.testing.assert_allclose(got["values"], want["values"], rtol=2e-7, err_msg=where)
    elif isinstance(want, dict):
        assert sorted(got) == sorted(want), where
        for key in want:
            _compare(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{where}[{i}]")
    else:
        assert got == want, where


@pytest.mark.parametrize("name", sorted(extension_api.PROGRAMS))
def test_program_matches_jax(jax, name):
    got = extension_api.to_plain(extension_api.PROGRAMS[name](jax))
    _compare(got, EXPECTED[name], name)


def test_rule_tables_are_the_primitive_attributes(jax):
    from jax.interpreters import ad, batching
    from pyjax._src.primitives.elementwise import sin_p
    assert ad.primitive_jvps[jax.lax.sin_p] is sin_p.jvp
    assert jax.lax.sin_p in ad.primitive_jvps and jax.lax.sin_p in batching.primitive_batchers
    p = jax.extend.core.Primitive("unregistered")
    assert p not in ad.primitive_jvps
    with pytest.raises(KeyError):
        ad.primitive_jvps[p]


def test_library_primitive_without_lowering_runs_its_impl_under_jit(jax):
    from jax.extend import core
    p = core.Primitive("plus_one")
    p.def_impl(lambda x: x + 1)
    p.def_abstract_eval(lambda x: jax.core.ShapedArray(x.shape, x.dtype))
    assert float(jax.jit(p.bind)(1.0)) == 2.0
    assert p.name not in pyjax._src.core.primitive.registry  # not one of pyjax's own


def test_compiler_hook_can_restrict_backends(jax):
    """chex.restrict_backends wraps jax._src.compiler.backend_compile_and_load."""
    from jax._src import compiler
    calls = []
    inner = compiler.backend_compile_and_load

    def spy(backend, *args, **kwargs):
        calls.append(backend.platform)
        return inner(backend, *args, **kwargs)
    compiler.backend_compile_and_load = spy
    try:
        jax.jit(lambda x: x * 3 + 1)(np.float32(2))
    finally:
        compiler.backend_compile_and_load = inner
    assert calls == ["cpu"]


def test_api_boundary_drops_library_frames(jax):
    from jax._src import traceback_util

    @traceback_util.api_boundary
    def entry(x):
        return jax.numpy.reshape(x, (7,))
    with pytest.raises(TypeError) as info:
        entry(jax.numpy.ones(6))
    files = [entry.tb_frame.f_code.co_filename for entry in _frames(info.value.__traceback__)]
    assert not any("/pyjax/_src/numpy/" in f for f in files[:-1])


def _frames(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def test_name_stack_follows_named_scope(jax):
    from jax.extend import source_info_util as siu
    with jax.named_scope("outer"), jax.named_scope("inner"):
        assert str(siu.current_name_stack()) == "outer/inner"
    assert str(siu.current_name_stack()) == ""
