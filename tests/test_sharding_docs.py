"""The code cells of JAX's docs/sharded-computation.md and docs/notebooks/shard_map.md, run
as notebooks under pyjax on 8 forced CPU devices, against what they gave under JAX 0.10.2
(tests/data/sharding_docs.json, made by tests/oracle/record_sharding_docs.py).

Per cell: the error it raised (class and message), what it printed (byte for byte, or, where
only float digits differ, the same text with every number within float32 rounding), the value
of its last expression and the arrays it bound (dtype, shape, weak type, sharding, values).
Each document runs in one subprocess, cells in order in one namespace, as a notebook does.
"""
import importlib.util
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from recorded import load

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = load("sharding_docs.json")

SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import pyjax
pyjax.alias_as_jax()  # the cells `import jax`, as the documents do
import jax
from record_sharding_docs import run_doc
print(json.dumps(run_doc(jax, np, sys.argv[2])))
"""

# Cells where pyjax differs from JAX, each checked to still differ (strict xfail).
GAPS: dict = {}


def _doc_results(doc):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYJAX_NUM_CPU_DEVICES", "JAX_NUM_CPU_DEVICES")}
    env.update(XLA_FLAGS="--xla_force_host_platform_device_count=8", COLUMNS="80")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, os.path.join(HERE, "oracle"), doc],
                          env=env, capture_output=True, text=True, cwd=os.path.dirname(HERE))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {r["name"]: r for r in json.loads(proc.stdout)}


_RESULTS = {}


@pytest.fixture
def results():
    def get(doc):
        if doc not in _RESULTS:
            _RESULTS[doc] = _doc_results(doc)
        return _RESULTS[doc]
    return get


#: visualize_array_sharding draws with rich, an optional dependency (as in JAX)
_NO_RICH = importlib.util.find_spec("rich") is None
CELLS = [(doc, rec) for doc, recs in DATA["docs"].items() for rec in recs]


@pytest.mark.parametrize("doc,want", CELLS, ids=[f"{d}-{r['name']}" for d, r in CELLS])
def test_cell(request, results, doc, want):
    if _NO_RICH and "┌" in want.get("stdout", ""):
        pytest.skip("the cell draws shardings with jax.debug.visualize_array_sharding, which "
                    "needs rich (pip install rich, as requirements-ecosystem.txt does)")
    if (doc, want["name"]) in GAPS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=GAPS[doc, want["name"]]))
    got = results(doc)[want["name"]]
    assert got.get("error") == want.get("error")
    check_text(got["stdout"], want["stdout"])
    assert ("display" in got) == ("display" in want)
    if "display" in want:
        check_record(got["display"], want["display"])
    assert sorted(got["bound"]) == sorted(want["bound"])
    for name, rec in want["bound"].items():
        check_record(got["bound"][name], rec)


NUMBER = re.compile(r"-?(?:\d+\.\d*|\.\d+|\d+)(?:e[-+]?\d+)?|nan|-?inf")


def check_text(got: str, want: str) -> None:
    """The same text; where it differs, the same words and layout (runs of spaces collapsed,
    as numpy pads columns to the widest number) with each number within float32 rounding."""
    if got == want:
        return
    squash = lambda s: re.sub(r"[ \t]+", " ", s)  # noqa: E731
    got_words, want_words = NUMBER.split(squash(got)), NUMBER.split(squash(want))
    assert got_words == want_words, f"\n--- pyjax\n{got}\n--- JAX\n{want}"
    got_nums = [float(n) for n in NUMBER.findall(squash(got))]
    want_nums = [float(n) for n in NUMBER.findall(squash(want))]
    np.testing.assert_allclose(got_nums, want_nums, rtol=1e-5, atol=1e-6,
                               err_msg=f"\n--- pyjax\n{got}\n--- JAX\n{want}")


def check_record(got: dict, want: dict) -> None:
    assert sorted(got) == sorted(want), (got, want)
    if "repr" in want:
        assert got["repr"] == want["repr"]
    elif "array" in want:
        check_array(got["array"], want["array"])
    else:
        assert got["tree"] == want["tree"]
        assert len(got["leaves"]) == len(want["leaves"])
        for g, w in zip(got["leaves"], want["leaves"]):
            check_array(g, w)


def check_array(got: dict, want: dict) -> None:
    for key in ("dtype", "shape", "weak_type", "sharding"):
        assert got[key] == want[key], (key, got[key], want[key])
    tol = 1e-5 if want["dtype"] in ("float32", "float16", "bfloat16") else 1e-12
    if "values" in want:
        np.testing.assert_allclose(got["values"], want["values"], rtol=tol, atol=tol)
        return
    g, w = got["checksums"], want["checksums"]
    scale = w["abs_sum"]
    np.testing.assert_allclose([g["sum"], g["abs_sum"]], [w["sum"], w["abs_sum"]],
                               atol=tol * scale, rtol=tol)
    np.testing.assert_allclose(g["first"] + g["last"], w["first"] + w["last"], rtol=tol,
                               atol=tol)
