"""Shared by the tests that hold pyjax to JAX 0.10.2's recorded outputs (tests/data/*.json,
written by tests/oracle/record_*.py): load a recording, build its cases under pyjax, and check
a jaxpr (or JAX's error) byte for byte and an eager value to float rounding."""
from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax

from op_table import x64_mode

HERE = os.path.dirname(os.path.abspath(__file__))
# the recorders' case lists are imported by the tests: put tests/oracle on the path
sys.path.insert(0, os.path.join(HERE, "oracle"))


def load(filename: str) -> dict:
    """The recording tests/data/`filename`."""
    with open(os.path.join(HERE, "data", filename)) as f:
        return json.load(f)


def by_name(records: Iterable[dict]) -> dict[tuple[str, bool], dict]:
    """Records keyed by (name, x64)."""
    return {(r["name"], r["x64"]): r for r in records}


def cases_under(cases_fn: Callable, x64: bool) -> dict[str, tuple]:
    """name -> (fn, args) of `cases_fn(pyjax, jnp, lax, np)`, built with x64 set."""
    with x64_mode(x64):
        return {name: (fn, args) for name, fn, args in cases_fn(pyjax, jnp, lax, np)}


def record_id(rec: dict) -> str:
    return f"{rec['name']}-x64={rec['x64']}"


def strip_paths(message: str) -> str:
    """File paths differ between the recording machine and this checkout: keep the base name
    and line number only."""
    return re.sub(r" at \S*/([^/\s]+\.py):(\d+)", r" at \1:\2", message)


def _same(message: str) -> str:
    return message


def tracer_error_normalizer(record: dict) -> Callable[[str], str]:
    """ConcretizationTypeError texts name the caller's file and line, which differ between the
    recording and this checkout: compare their first two lines only."""
    if record.get("error", {}).get("type") == "ConcretizationTypeError":
        return lambda message: "\n".join(message.splitlines()[:2])
    return _same


def check_raises(fn: Callable, args: Sequence[Any], error: dict,
                 normalize: Callable[[str], str] = _same) -> None:
    """fn(*args) raises JAX's recorded `error`: its class, and its text after `normalize`."""
    with pytest.raises(Exception) as info:
        fn(*args)
    assert type(info.value).__name__ == error["type"]
    assert normalize(str(info.value)) == normalize(error["message"])


def check_jaxpr(fn: Callable, args: Sequence[Any], record: dict,
                normalize: Callable[[str], str] = _same) -> None:
    """make_jaxpr(fn)(*args) prints record["jaxpr"], or raises record["error"]."""
    if "error" in record:
        check_raises(pyjax.make_jaxpr(fn), args, record["error"], normalize)
        return
    got = str(pyjax.make_jaxpr(fn)(*args))
    assert got == record["jaxpr"], f"\n--- pyjax\n{got}\n--- JAX\n{record['jaxpr']}"


def check_value(got: Any, want: Any) -> None:
    """An eager result against a recorded value (tests/oracle's value_of): dtype, shape, weak
    type where recorded, and values to float32 (or float64) rounding."""
    if isinstance(want, list):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            check_value(g, w)
        return
    if "weak_type" in want:
        assert bool(getattr(got, "weak_type", False)) == want["weak_type"]
    got = np.asarray(got)
    assert str(got.dtype) == want["dtype"]
    assert list(got.shape) == want["shape"]
    values = np.array(want["values"], np.float64)
    if got.dtype.kind == "c":
        got = np.stack([got.real, got.imag], -1)
    tol = 1e-12 if got.dtype in (np.float64, np.complex128) else 2e-6
    np.testing.assert_allclose(got.astype(np.float64), values.reshape(got.shape), rtol=tol,
                               atol=tol)


_ON_DEVICES = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import pyjax
pyjax.alias_as_jax()  # the cases import jax.sharding & co., as users' code does
import jax, jax.numpy as jnp
from jax import lax
from importlib import import_module
print(json.dumps(getattr(import_module(sys.argv[2]), sys.argv[3])(jax, jnp, lax, np)))
"""


def run_on_devices(recorder: str, function: str, devices: int) -> Any:
    """`function(jax, jnp, lax, np)` of tests/oracle/`recorder`.py run under the alias in a
    fresh process with `devices` forced CPU devices (as its recorder ran JAX): its JSON."""
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYJAX_NUM_CPU_DEVICES", "JAX_NUM_CPU_DEVICES")}
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    proc = subprocess.run([sys.executable, "-c", _ON_DEVICES, os.path.join(here, "oracle"),
                           recorder, function], env=env, capture_output=True, text=True,
                          cwd=os.path.dirname(here))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)
