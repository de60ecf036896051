"""Programs written with JAX's libraries (optax, flax, equinox, chex, jaxtyping) run on pyjax
through `pyjax.alias_as_jax()` and give the results recorded from real JAX 0.10.2
(tests/oracle/record_ecosystem.py -> tests/data/ecosystem.json).

Each program runs in its own interpreter (tests/ecosystem/run_program.py --alias): the alias
rebinds `jax` in sys.modules for the whole process and the libraries keep global state (flax's
module registry, equinox's and chex's caches), so running them in this process would change
what every later test imports.  A program whose libraries are not installed is skipped, naming
the library; install them with `pip install --no-deps -r requirements-ecosystem.txt`.
"""
import ast
import importlib.util
import json
import math
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
DATA = os.path.join(HERE, "..", "data", "ecosystem.json")
with open(DATA) as _f:
    RECORDED = json.load(_f)["programs"]

# Relative tolerances, float32 throughout.  Measured on real JAX: moving every jax.random draw
# (data and initial parameters) by one ulp moves the loss curves by up to 8.7e-6 (the adamw
# curve once its loss is down to 4e-4), gradient norms by 4.1e-6, final losses and parameter
# checksums by up to 5.8e-7.  pyjax (elementwise functions and summation orders a few ulp off
# XLA's) is within 7.6e-7 of JAX's loss curves, 1.5e-6 of its gradient norms and 2.4e-7 of its
# final losses; the bounds leave room for training drift of the size JAX itself shows.
RTOL = {"losses": 2e-5, "grad_norms": 2e-5, "final_loss": 1e-5, "param_checksum": 1e-5}
RTOL_DEFAULT = 1e-6  # values computed in one go (schedules, checked functions' outputs, sums)
# Under plain jax.jit, JAX surfaces a callback's exception as ValueError from its C++ dispatch
# path and as JaxRuntimeError from its Python path (which one depends on JAX's caches), so for
# these outcomes only "raised, naming error_if's message" is compared, not the class.
CLASS_FREE = {("equinox_error_if", "jit_bad"), ("equinox_error_if", "vmap_bad")}


def _libraries(name: str) -> list[str]:
    """Top-level packages a program imports, other than jax (read from its source)."""
    with open(os.path.join(PROGRAMS, name + ".py")) as f:
        tree = ast.parse(f.read())
    found = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            found += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module.split(".")[0])
    return [m for m in dict.fromkeys(found) if m != "jax" and m not in sys.stdlib_module_names]


def _run_aliased(name: str) -> dict:
    missing = [lib for lib in _libraries(name) if importlib.util.find_spec(lib) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: "
                    "pip install --no-deps -r requirements-ecosystem.txt")
    command = [sys.executable, os.path.join(HERE, "run_program.py"), "--alias", "--checks", name]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        pytest.fail(f"{name} failed under pyjax.alias_as_jax():\n{done.stderr[-6000:]}")
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["jax_module"] == "pyjax", out["jax_module"]
    assert out["jaxlib_modules"] == [], "a library imported real jaxlib next to pyjax"
    return out["result"]


def _compare(got, expected, path: tuple) -> None:
    """Recorded structure and values: floats within RTOL by key, everything else exactly."""
    where = "/".join(map(str, path))
    if isinstance(expected, dict):
        if path in CLASS_FREE:
            assert ("raised" in got) == ("raised" in expected), (where, got)
            assert got.get("names_error") == expected.get("names_error"), (where, got)
            return
        assert sorted(got) == sorted(expected), (where, got)
        for key in expected:
            _compare(got[key], expected[key], path + (key,))
    elif isinstance(expected, list) and expected and isinstance(expected[0], float):
        assert len(got) == len(expected), (where, got)
        rtol = next((RTOL[k] for k in reversed(path) if k in RTOL), RTOL_DEFAULT)
        for g, e in zip(got, expected):
            assert math.isclose(g, e, rel_tol=rtol), (where, got, expected, rtol)
    elif isinstance(expected, float):
        rtol = next((RTOL[k] for k in reversed(path) if k in RTOL), RTOL_DEFAULT)
        assert math.isclose(got, expected, rel_tol=rtol), (where, got, expected, rtol)
    else:
        assert got == expected, (where, got, expected)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_program_matches_jax(name):
    _compare(_run_aliased(name), RECORDED[name], (name,))


def test_every_program_is_recorded():
    names = {f[:-3] for f in os.listdir(PROGRAMS) if f.endswith(".py")}
    assert names == set(RECORDED)
