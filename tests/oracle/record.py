"""Record oracle test data from real JAX (0.10.2) into tests/data/*.json.

Run from anywhere with a Python that has jax==0.10.2 and jaxlib installed:

    /work/oracle/bin/python tests/oracle/record.py

The parent process starts two worker subprocesses of this same script, one
with JAX_ENABLE_X64=0 and one with JAX_ENABLE_X64=1 (each checks that the
flag really took effect), gathers their records and writes

    tests/data/promotion.json  tests/data/jaxprs.json
    tests/data/reprs.json      tests/data/errors.json

Each file is one JSON object ``{"jax_version", "jaxlib_version", "records"}``
with one record per line (keys sorted) so diffs stay small.  Every record
has ``name`` and ``x64``.  Hex object addresses (``0x7f...``) in messages are
replaced by ``0x?`` so that reruns are byte-identical; file paths and line
numbers are kept verbatim.  Case definitions live in ``cases.py``.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "data")

_ADDR = re.compile(r"0x[0-9a-fA-F]{6,}")


def _clean(s):
    return _ADDR.sub("0x?", s)


def _exc(e):
    t = type(e)
    return {
        "type": t.__name__,
        "module": t.__module__,
        "mro": [c.__name__ for c in t.__mro__ if c is not object],
        "message": _clean(str(e)),
    }


def _run(thunk):
    """Call thunk(); return (value, exception_or_None, warnings_list)."""
    import warnings
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        try:
            v, err = thunk(), None
        except Exception as e:  # noqa: BLE001
            v, err = None, e
    ws = [[w.category.__name__, _clean(str(w.message))] for w in log]
    return v, err, ws


def _dtname(dt):
    import numpy as np
    return np.dtype(dt).name


# --------------------------------------------------------------------------
# worker
# --------------------------------------------------------------------------

def worker(x64, out_path):
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax import lax

    if bool(jax.config.jax_enable_x64) != x64:
        raise SystemExit("JAX_ENABLE_X64 did not take effect (wanted %r)" % x64)
    check = jnp.zeros(1).dtype
    if check != (np.float64 if x64 else np.float32):
        raise SystemExit("x64 sanity check failed: %s" % check)

    sys.path.insert(0, HERE)
    import cases

    out = {"promotion": [], "jaxprs": [], "reprs": [], "errors": []}

    # ---------------- promotion ----------------
    def strong_value(d):
        dt = jnp.bfloat16 if d == "bfloat16" else np.dtype(d)
        return np.zeros((), dtype=dt)

    def strong_dtype(d):
        return np.dtype(jnp.bfloat16) if d == "bfloat16" else np.dtype(d)

    weak = cases.weak_scalars()
    inputs = [(d, "strong") for d in cases.PROMOTION_DTYPES] + \
             [(w, "weak") for w in weak]

    def value(nm, kind):
        return strong_value(nm) if kind == "strong" else weak[nm]

    def rt_arg(nm, kind):
        return strong_dtype(nm) if kind == "strong" else weak[nm]

    P = out["promotion"]

    def dtype_rec(thunk, weak=False):
        v, err, ws = _run(thunk)
        if err is not None:
            rec = {"error": _exc(err)}
        else:
            rec = {"dtype": _dtname(v.dtype if weak else v)}
            if weak:
                rec["weak_type"] = bool(v.weak_type)
        if ws:
            rec["warnings"] = ws
        return rec

    for a, ka in inputs:
        rec = dtype_rec(lambda: jnp.result_type(rt_arg(a, ka)))
        rec.update(kind="result_type_unary", lhs=a, name="result_type_unary:" + a)
        P.append(rec)
        rec = dtype_rec(lambda: jax.eval_shape(lambda u: u, value(a, ka)), True)
        rec.update(kind="abstractify", lhs=a, name="abstractify:" + a)
        P.append(rec)
    for a, ka in inputs:
        for b, kb in inputs:
            base = {"lhs": a, "rhs": b}
            rec = dtype_rec(lambda: jax.eval_shape(
                lambda u, v: u + v, value(a, ka), value(b, kb)), True)
            rec.update(base, kind="add", name="add:%s+%s" % (a, b))
            P.append(rec)
            rec = dtype_rec(lambda: jnp.result_type(rt_arg(a, ka), rt_arg(b, kb)))
            rec.update(base, kind="result_type", name="result_type:%s,%s" % (a, b))
            P.append(rec)
            if ka == "strong" and kb == "strong":
                rec = dtype_rec(lambda: jnp.promote_types(strong_dtype(a),
                                                          strong_dtype(b)))
                rec.update(base, kind="promote_types",
                           name="promote_types:%s,%s" % (a, b))
                P.append(rec)
    for name, thunk in cases.canonicalization_cases(jnp, np):
        rec = {"kind": "canonicalize", "name": "canonicalize:" + name}
        v, err, ws = _run(thunk)
        if err is not None:
            rec["error"] = _exc(err)
        elif isinstance(v, jax.Array):
            rec.update(dtype=_dtname(v.dtype), weak_type=bool(v.weak_type),
                       shape=list(v.shape), repr=_clean(repr(v)))
        elif isinstance(v, (np.dtype, type)):
            try:
                rec.update(dtype=_dtname(v))
            except Exception:  # noqa: BLE001
                pass
            rec.update(value=repr(v))
        else:
            rec.update(value=repr(v), type=type(v).__name__)
            if hasattr(v, "dtype"):
                rec.update(dtype=_dtname(v.dtype))
        if ws:
            rec["warnings"] = ws
        P.append(rec)

    # ---------------- jaxprs ----------------
    for name, fn, args, kw in cases.jaxpr_cases(jax, jnp, lax, np, x64=x64):
        rec = {"name": name}
        if kw:
            rec["make_jaxpr_kwargs"] = {k: repr(v) for k, v in kw.items()}
        cj, err, ws = _run(lambda: jax.make_jaxpr(fn, **kw)(*args))
        if err is not None:
            rec["error"] = _exc(err)
        else:
            rec["jaxpr"] = _clean(str(cj))
            rec["in_avals"] = [str(a) for a in cj.in_avals]
            rec["out_avals"] = [str(a) for a in cj.out_avals]
        if ws:
            rec["warnings"] = ws
        out["jaxprs"].append(rec)

    # ---------------- reprs ----------------
    def describe(v):
        rec = {"repr": repr(v), "str": str(v), "dtype": _dtname(v.dtype),
               "shape": list(v.shape), "weak_type": bool(v.weak_type)}
        if v.ndim == 0:
            rec["format"] = format(v)
            rec["fstring"] = f"{v}"
            for spec in (".2f", "e", ">8"):
                r, e, _ = _run(lambda: format(v, spec))
                if e is None:
                    rec["format_" + spec] = r
                else:
                    rec["format_" + spec + "_error"] = _exc(e)
        rec["tolist"] = repr(v.tolist()) if v.size <= 50 else None
        return rec

    for name, thunk in cases.repr_cases(jnp, np, x64=x64):
        rec = {"name": name}
        v, err, ws = _run(thunk)
        if err is None:
            d, err, ws2 = _run(lambda: describe(v))
            ws += ws2
        if err is not None:
            rec["error"] = _exc(err)
        else:
            rec.update(d)
        if ws:
            rec["warnings"] = ws
        out["reprs"].append(rec)

    # ---------------- errors ----------------
    for name, thunk in cases.error_cases(jax, jnp, lax, np, x64=x64):
        rec = {"name": name}
        v, err, ws = _run(thunk)
        if err is None:
            rec["raised"] = False
            rec["result"] = _clean(repr(v))
        else:
            rec["raised"] = True
            rec.update(_exc(err))
        if ws:
            rec["warnings"] = ws
        out["errors"].append(rec)

    for k in out:
        for r in out[k]:
            r["x64"] = x64
    with open(out_path, "w") as f:
        json.dump(out, f)


# --------------------------------------------------------------------------
# parent
# --------------------------------------------------------------------------

def write(path, records, versions):
    lines = ["{"]
    for k, v in sorted(versions.items()):
        lines.append("%s: %s," % (json.dumps(k), json.dumps(v)))
    lines.append('"records": [')
    body = [json.dumps(r, sort_keys=True, ensure_ascii=True) for r in records]
    lines.append(",\n".join(body))
    lines.append("]")
    lines.append("}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    json.load(open(path))  # validate


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--worker":
        worker(sys.argv[2] == "1", sys.argv[3])
        return
    import jax
    import jaxlib
    versions = {"jax_version": jax.__version__,
                "jaxlib_version": jaxlib.__version__,
                "generator": "tests/oracle/record.py"}
    if jax.__version__ != "0.10.2":
        print("warning: expected jax 0.10.2, got", jax.__version__)
    results = {}
    failed = []
    with tempfile.TemporaryDirectory() as td:
        for flag in ("0", "1"):
            path = os.path.join(td, "out%s.json" % flag)
            env = dict(os.environ)
            env["JAX_ENABLE_X64"] = flag
            env.setdefault("JAX_PLATFORMS", "cpu")
            env["PYTHONHASHSEED"] = "0"
            try:
                subprocess.run([sys.executable, os.path.abspath(__file__),
                                "--worker", flag, path], env=env, check=True)
                with open(path) as f:
                    results[flag] = json.load(f)
            except Exception:  # noqa: BLE001
                traceback.print_exc()
                failed.append(flag)
                results[flag] = {"promotion": [], "jaxprs": [], "reprs": [],
                                 "errors": []}
    os.makedirs(DATA, exist_ok=True)
    for key in ("promotion", "jaxprs", "reprs", "errors"):
        recs = results["0"][key] + results["1"][key]
        write(os.path.join(DATA, key + ".json"), recs, versions)
        print("%-10s %5d records" % (key, len(recs)))
    if failed:
        sys.exit("worker(s) failed for JAX_ENABLE_X64=%s" % ",".join(failed))


if __name__ == "__main__":
    main()
