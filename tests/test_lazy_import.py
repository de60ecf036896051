"""`import pyjax` leaves the less common modules to first use (issue 16): checked in fresh
interpreters, since the test session itself has long loaded everything."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: modules a bare `import pyjax` must not load (each is loaded on first use of its names)
DEFERRED = [
    "scipy", "opt_einsum", "numpy.random", "importlib.abc", "pyjax.scipy", "pyjax.random",
    "pyjax.lax.linalg", "pyjax.numpy.linalg", "pyjax.numpy.fft",
    "pyjax._src.primitives.linalg", "pyjax._src.primitives.control_flow",
    "pyjax._src.primitives.conv", "pyjax._src.primitives.windows",
    "pyjax._src.primitives.special", "pyjax._src.primitives.rng", "pyjax._src.random.base",
    "pyjax._src.parallel.collectives", "pyjax._src.parallel.shard_map", "pyjax._src.state",
    "pyjax._src.hijax", "pyjax._src.callback", "pyjax._src.compat.core",
    "pyjax._src.numpy.statistics", "pyjax._src.numpy.setops", "pyjax._src.numpy.sorting",
    "pyjax._src.numpy.index_tricks", "pyjax._src.numpy.manipulation",
    "pyjax._src.transforms.custom_derivatives"]


def run_fresh(code: str) -> dict:
    """Run `code` in a new interpreter (pyjax from this checkout); it prints one JSON value."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_loads_none_of_the_deferred_modules() -> None:
    loaded = run_fresh("import sys, json, pyjax, pyjax.numpy, pyjax.lax; "
                       "print(json.dumps(sorted(sys.modules)))")
    assert [m for m in DEFERRED if m in loaded] == []


def test_every_public_name_resolves_and_is_listed() -> None:
    code = """
import json, pyjax, pyjax.lax as lax, pyjax.numpy as jnp
bad = []
for mod in (pyjax, lax, jnp):
    listed = set(dir(mod))
    for name in [*mod.__all__, *(pyjax._LAZY_SUBMODULES if mod is pyjax else ())]:
        if name not in listed:
            bad.append(f"{mod.__name__}.{name} not in dir()")
        if getattr(mod, name, None) is None and name not in ("newaxis",):
            bad.append(f"{mod.__name__}.{name} is missing")
print(json.dumps(bad))
"""
    assert run_fresh(code) == []


def test_lazy_names_are_the_defining_modules_objects() -> None:
    code = """
from pyjax.lax import *  # noqa: F403  (binds lax's names, `linalg` among them, first)
import json, pyjax, pyjax.numpy as jnp
from pyjax import lax
from pyjax.numpy import linalg
from pyjax._src.numpy import linalg as np_linalg, ufunc_api
from pyjax._src.primitives import control_flow, conv
from pyjax._src.random import base
checks = [linalg is jnp.linalg, jnp.linalg.solve is np_linalg.solve,
          lax.cond is control_flow.cond, lax.conv_general_dilated is conv.conv_general_dilated,
          lax.cond_p is control_flow.cond_p, pyjax.random.split is base.split,
          jnp.add is ufunc_api.add, isinstance(jnp.add, jnp.ufunc),
          "cond" in vars(lax), "linalg" in dir(jnp)]
print(json.dumps(checks))
"""
    assert run_fresh(code) == [True] * 10


def test_load_deferred_loads_what_the_public_names_load() -> None:
    """`lazy_loader.load_deferred` (used by the op-table census, checkify and the compat layer)
    registers exactly the primitives and loads exactly the modules that touching every public
    name of pyjax, lax and jnp does (bar the packages that were always lazy: scipy, nn, ...)."""
    by_helper = """
import json, sys, pyjax
from pyjax._src.lazy_loader import load_deferred
from pyjax._src.core.primitive import registry
load_deferred()
print(json.dumps([sorted(registry), sorted(m for m in sys.modules if m.startswith("pyjax"))]))
"""
    by_names = """
import json, sys, pyjax, pyjax.lax as lax, pyjax.numpy as jnp
from pyjax._src.core.primitive import registry
for mod in (pyjax, lax, jnp):
    for name in mod.__all__:
        getattr(mod, name)
print(json.dumps([sorted(registry), sorted(m for m in sys.modules if m.startswith("pyjax"))]))
"""
    helper, names = run_fresh(by_helper), run_fresh(by_names)
    assert helper[0] == names[0]
    assert helper[1] == names[1]
    assert {"cholesky", "cond", "conv_general_dilated", "psum", "random_bits", "eq_to"} <= set(
        helper[0])


def test_deferred_methods_bind_like_installed_ones() -> None:
    code = """
import json, pyjax, pyjax.numpy as jnp
from pyjax._src.core.array import Array
x = jnp.arange(6.0)
first = x.searchsorted(2.5)
from pyjax._src.numpy import sorting, manipulation
traced = pyjax.jit(lambda a: a.reshape(2, 3).trace())(x)
print(json.dumps([int(first), float(traced), Array.searchsorted is sorting.searchsorted,
                  Array.__dict__["trace"] is manipulation.trace,
                  x.argpartition(2).shape == (6,),
                  int(jnp.array([1, 0]).choose([x[:2], x[2:4]])[0])]))
"""
    assert run_fresh(code) == [3, 4.0, True, True, True, 2]


@pytest.mark.parametrize("name", ["checkify", "extend"])
def test_registry_keyed_users_see_every_family(name: str) -> None:
    """Modules that look primitives up by name load every family first."""
    code = {
        "checkify": "import json, pyjax\nfrom pyjax.experimental import checkify\n"
                    "from pyjax._src.checkify.interpreter import error_checks\n"
                    "print(json.dumps(sorted(p.name for p in error_checks)))",
        "extend": "import json, pyjax\nfrom pyjax.extend.core import primitives\n"
                  "print(json.dumps(sorted(primitives)))",
    }[name]
    names = set(run_fresh(code))
    assert {"cond", "scan", "while", "custom_linear_solve"} <= names
