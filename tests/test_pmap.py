"""pmap over 4 local CPU devices (a subprocess sets PYJAX_NUM_CPU_DEVICES=4): results of the
collectives equal what JAX 0.10.2 computed with 4 forced devices (tests/data/pmap.json, made by
tests/oracle/record_pmap.py); device placement and JAX's error for too few devices."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "oracle"))
from record_pmap import CASES, ERROR_CASES, JAXPR_CASES  # noqa: E402

RECORDS = {r["name"]: r for r in json.load(open(os.path.join(HERE, "data", "pmap.json")))["records"]}

SCRIPT = """
import json, sys
import numpy as np
import pyjax as jax, pyjax.numpy as jnp
from pyjax import lax
cases, jaxpr_cases = json.loads(sys.argv[1]), json.loads(sys.argv[2])
x = jnp.arange(12.0).reshape(4, 3)
out = {}
for name, src in cases.items():
    fn = jax.pmap(eval(src, {"lax": lax, "jnp": jnp}), axis_name="i")
    y = fn(x)
    out[name] = {"dtype": str(y.dtype), "shape": list(y.shape), "data": np.asarray(y).ravel().tolist(),
                 "devices": sorted(d.id for d in y.devices()), "jaxpr": str(jax.make_jaxpr(fn)(x))}
for name, src in jaxpr_cases.items():
    out[name] = {"jaxpr": str(jax.make_jaxpr(eval(src, {"jax": jax, "lax": lax, "jnp": jnp}))(x))}
out["count"] = jax.local_device_count()
try:
    jax.pmap(lambda v: v)(jnp.ones((5, 2)))
    out["too_many"] = "NoError"
except ValueError as e:
    out["too_many"] = "ValueError"
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def results():
    env = dict(os.environ, PYJAX_NUM_CPU_DEVICES="4")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(CASES),
                           json.dumps(JAXPR_CASES)], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


@pytest.mark.parametrize("name", sorted(CASES))
def test_collective_matches_jax(results, name):
    got, expected = results[name], RECORDS[name]
    assert (got["dtype"], got["shape"]) == (expected["dtype"], expected["shape"])
    np.testing.assert_allclose(got["data"], expected["data"], rtol=1e-6)
    assert got["devices"] == [0, 1, 2, 3]


@pytest.mark.parametrize("name", sorted(CASES) + sorted(JAXPR_CASES))
def test_jaxpr_matches_jax(results, name):
    """Staged, pmap is JAX's jit[name=_fun] of a shard_map over the mapped devices."""
    assert results[name]["jaxpr"] == RECORDS[name]["jaxpr"]


def test_device_count_and_too_many_slices(results):
    assert results["count"] == 4
    assert results["too_many"] == "ValueError"


def test_keyword_arguments_are_mapped_over_their_leading_axis():
    """As in JAX: in_axes covers positional arguments; keyword arguments map over axis 0."""
    import pyjax as jax
    import pyjax.numpy as jnp
    f = jax.pmap(lambda x, y=None: x * 2 + y)
    np.testing.assert_array_equal(f(jnp.ones((1, 3)), y=jnp.arange(3.0)[None]), [[2, 3, 4]])
    g = jax.pmap(lambda a, b: a + b["k"])
    np.testing.assert_array_equal(g(jnp.ones((1, 2)), b={"k": jnp.ones((1, 2))}), [[2, 2]])


def test_absent_backends_raise_jaxs_errors():
    import pyjax as jax
    with pytest.raises(RuntimeError, match="no platforms that are instances of gpu"):
        jax.devices("gpu")
    with pytest.raises(RuntimeError, match=r"Unknown backend tpu. Available backends are \['cpu'\]"):
        jax.device_count("tpu")
    assert jax.devices("cpu") == jax.devices()


REPEAT_SCRIPT = """
import json
import numpy as np
import pyjax as jax, pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.transforms.jit import PjitFunction
jit_calls = [0]
general = PjitFunction.__call__
def counted(self, *args, **kwargs):
    jit_calls[0] += 1
    return general(self, *args, **kwargs)
PjitFunction.__call__ = counted
ring = [(i, (i + 1) % 4) for i in range(4)]
bodies = {"psum": lambda v: lax.psum(v, "i"), "all_gather": lambda v: lax.all_gather(v, "i"),
          "ppermute": lambda v: lax.ppermute(v, "i", ring),
          "tree": lambda v, w: (v * w, {"m": lax.pmean(v, "i")}),
          "weak": lambda v: (lax.psum(1.0, "i"), v)}
def seen(tree):
    return [(np.asarray(a).tobytes().hex(), str(a.dtype), a.shape, a.weak_type, repr(a.sharding),
             a.committed) for a in jax.tree.leaves(tree)]
put = jax.pmap(lambda v: v, "i")
out = {}
for name, body in bodies.items():
    f = jax.pmap(body, "i")
    args = [put(jnp.arange(12.0).reshape(4, 3))] * (2 if name == "tree" else 1)
    first = seen(f(*args))
    before = jit_calls[0]
    again = [seen(f(*args)) for _ in range(3)]
    short = jit_calls[0] == before
    with jax.disable_jit():
        unjitted = seen(f(*args))
    jax.clear_caches()
    cleared = seen(f(*args))
    wider = [put(jnp.arange(20.0).reshape(4, 5))] * len(args)
    out[name] = {"same": all(a == first for a in again) and cleared == first,
                 "short": short, "unjitted": [v[0] for v in unjitted] == [v[0] for v in first],
                 "wider": seen(f(*wider)) == seen(jax.pmap(body, "i")(*wider))}
print(json.dumps(out))
"""


def test_repeated_calls_take_the_short_path_with_the_same_results():
    """A second call with the same argument types runs the compiled function directly (not
    through jit's wrapper) and gives the first call's values, types and shardings; disable_jit,
    clear_caches and new argument shapes are still honoured."""
    env = dict(os.environ, PYJAX_NUM_CPU_DEVICES="4")
    proc = subprocess.run([sys.executable, "-c", REPEAT_SCRIPT], env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    for name, checks in json.loads(proc.stdout).items():
        assert checks == {"same": True, "short": True, "unjitted": True, "wider": True}, name


OPTIONS_SCRIPT = """
import json
import pyjax as jax, pyjax.numpy as jnp
from pyjax import lax
runs = [0]
def body(v):
    runs[0] += 1
    return lax.psum(v, "i")
f = jax.pmap(body, "i")
x = jax.pmap(lambda v: v, "i")(jnp.arange(8.0).reshape(4, 2))
f(x), f(x)
out = {}
def body_runs(call):
    before = runs[0]
    call()
    return runs[0] - before
out["short"] = body_runs(lambda: f(x))
jax.config.update("jax_disable_jit", True)
out["global_disable_jit"] = body_runs(lambda: f(x))
jax.config.update("jax_disable_jit", False)
with jax.disable_jit():
    out["local_disable_jit"] = body_runs(lambda: f(x))
jax.config.update("jax_enable_x64", True)
out["x64_retraces"] = body_runs(lambda: f(x))
jax.config.update("jax_enable_x64", False)
out["back"] = body_runs(lambda: f(x))
try:
    with jax.no_execution():
        f(x)
    out["no_execution"] = "ran"
except RuntimeError:
    out["no_execution"] = "RuntimeError"
print(json.dumps(out))
"""


def test_the_short_path_follows_global_and_thread_options():
    """Options set for the process (config.update) or for this thread (context managers) are
    honoured by the short call: disable_jit runs the body, x64 retraces, no_execution raises."""
    env = dict(os.environ, PYJAX_NUM_CPU_DEVICES="4")
    proc = subprocess.run([sys.executable, "-c", OPTIONS_SCRIPT], env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"short": 0, "global_disable_jit": 1,
                                       "local_disable_jit": 1, "x64_retraces": 1, "back": 0,
                                       "no_execution": "RuntimeError"}


LAYOUT_SCRIPT = """
import gc, json
import pyjax as jax, pyjax.numpy as jnp
from pyjax._src.core import primitive
f = jax.pmap(lambda v: v * 2, "i")
x = jax.pmap(lambda v: v, "i")(jnp.arange(8.0).reshape(4, 2))
first = f(x)
del first, x  # (the arrays the general path laid out)
gc.collect()
x = f(jnp.arange(8.0).reshape(4, 2))
y = f(x)  # the short path
out = {"eager": repr((y + 1).sharding) == repr(y.sharding)}
del x, y
gc.collect()
out["hook_off"] = primitive.eager_layout is None
print(json.dumps(out))
"""


def test_short_path_results_lay_out_eager_operations_on_them():
    """An eager operation on a result of the short call is laid out as the result is (as JAX's
    op-by-op jit lays it out), also once every array the general path laid out is gone; with
    no laid-out array left the eager hook is off again."""
    env = dict(os.environ, PYJAX_NUM_CPU_DEVICES="4")
    proc = subprocess.run([sys.executable, "-c", LAYOUT_SCRIPT], env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"eager": True, "hook_off": True}


ERROR_SCRIPT = """
import functools, json, sys
sys.path.insert(0, sys.argv[1])
import pyjax as jax, pyjax.numpy as jnp
from pyjax import lax
from record_pmap import ERROR_CASES, error_text
x = jnp.arange(12.0).reshape(4, 3)
print(json.dumps({name: error_text(lambda: eval(src, {"jax": jax, "lax": lax, "jnp": jnp,
                                                      "functools": functools})(x))
                  for name, src in ERROR_CASES.items()}))
"""


def _class_names(text: str) -> str:
    """`<class 'a.b.C'>` as `<class 'C'>` (JAX's classes live in other modules)."""
    return re.sub(r"<class '(?:[\w.]+\.)?(\w+)'>", r"<class '\1'>", text)


def test_static_argument_errors_match_jax():
    """Static arguments that do not hash (tracers, Arrays, lists) or are missing raise JAX's
    ValueErrors, with the function's name."""
    env = dict(os.environ, PYJAX_NUM_CPU_DEVICES="4")
    proc = subprocess.run([sys.executable, "-c", ERROR_SCRIPT, os.path.join(HERE, "oracle")],
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    for name in ERROR_CASES:
        assert _class_names(got[name]) == _class_names(RECORDS[name]["error"]), name


def test_ppermute_over_the_device_axis_is_one_reorder():
    """On pmap's stacked device axis a full ppermute is one `reorder` equation (one take into
    a new buffer, where slices and a concatenate took three calls); its transpose is the
    inverse order and key arrays move their key data."""
    import pyjax as jax
    from pyjax import lax
    from pyjax._src.core.trace import trace_state
    from pyjax._src.parallel.collectives import mark_device_axis
    ring = [(i, (i + 1) % 4) for i in range(4)]

    def on_devices(fun):
        def body(v):
            mark_device_axis(trace_state.trace)  # as pmap marks its vmap trace
            return fun(v)
        return jax.vmap(body, axis_name="i")

    shift = on_devices(lambda v: lax.ppermute(v, "i", ring))
    x = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    jaxpr = jax.make_jaxpr(shift)(x).jaxpr
    assert [(e.primitive.name, e.params) for e in jaxpr.eqns] == [
        ("reorder", {"axis": 0, "order": (3, 0, 1, 2)})]
    np.testing.assert_array_equal(shift(x), np.roll(x, 1, axis=0))
    np.testing.assert_array_equal(jax.jit(shift)(x), np.roll(x, 1, axis=0))
    w = np.arange(12.0, dtype=np.float32).reshape(4, 3) ** 2
    grad = jax.grad(lambda a: (shift(a) * w).sum())(x)
    np.testing.assert_array_equal(grad, np.roll(w, -1, axis=0))
    keys = jax.random.split(jax.random.key(0), 4)
    np.testing.assert_array_equal(jax.random.key_data(shift(keys)),
                                  np.roll(jax.random.key_data(keys), 1, axis=0))
    identity = on_devices(lambda v: lax.ppermute(v, "i", [(i, i) for i in range(4)]))
    assert not jax.make_jaxpr(identity)(x).jaxpr.eqns  # the identity moves nothing


VMAP_SCRIPT = """
import numpy as np
import pyjax as jax, pyjax.numpy as jnp
from pyjax import lax
xs = jnp.arange(24.0).reshape(2, 4, 3)
bodies = [jnp.sin, lambda v: lax.psum(v, "i"), lambda v: lax.all_gather(v, "i"),
          lambda v: v * lax.axis_index("i"), lambda v: lax.ppermute(v, "i", [(0, 1), (1, 0)])]
for body in bodies:
    f = jax.pmap(body, axis_name="i")
    want = np.stack([np.asarray(f(x)) for x in xs])
    for g in (jax.vmap(f), jax.jit(jax.vmap(f))):
        np.testing.assert_array_equal(np.asarray(g(xs)), want)
    np.testing.assert_array_equal(np.asarray(jax.vmap(f, in_axes=1, out_axes=1)(
        xs.transpose(1, 0, 2))), np.moveaxis(want, 0, 1))
print("ok")
"""


def test_vmap_of_pmap_equals_a_loop_of_pmaps():
    """vmap of a pmap (a shard_map batched by JAX's rule) computes what pmap computes on each
    slice, collectives included."""
    env = dict(os.environ, PYJAX_NUM_CPU_DEVICES="4")
    proc = subprocess.run([sys.executable, "-c", VMAP_SCRIPT], env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
