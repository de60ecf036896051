"""Record what JAX 0.10.2 returns for the fuzz suite's spot checks into tests/data/fuzz.json.

    /work/oracle/bin/python tests/oracle/record_fuzz.py

Two kinds of record (x64 off):
  "dtypes":      every jnp unary/binary ufunc of tests/fuzz_strategies.py on every input kind
                 (the x32 dtypes as shape-(2,) arrays, and Python scalars): result dtype and
                 weak type, or the error class JAX raises (via eval_shape).
  "reduction_dtypes": each reduction along axis 0 of a (2, 3) array of each x32 dtype, with
                 and without dtype=.
  "scalar_dtypes": the same, called eagerly with 0-d arrays for some operands, kept only where
                 JAX's answer differs from "dtypes" (value-dependent paths).
  "regressions": fuzz_strategies.REGRESSIONS (pyjax bugs the fuzzing found): JAX's answers.
  "differences": each entry of KNOWN_DIFFERENCES' examples: JAX's values (as NumPy reprs),
                 dtype and weak type, or the error class.
The cases themselves live in tests/fuzz_strategies.py (which never imports jax), so the test
and this script run the same expressions.
"""
import json
import multiprocessing
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
OUT = os.path.join(os.path.dirname(HERE), "data", "fuzz.json")


def _scalar_dtypes(job: tuple) -> dict:
    """Worker: the scalar-operand records of some functions (see main)."""
    import jax.numpy as jnp

    import fuzz_strategies as fs
    names, dtypes = job
    warnings.simplefilter("ignore")
    out = {}
    for name in names:
        fn = getattr(jnp, name)
        for kinds in fs.kind_tuples(1 if name in fs.UNARY else 2):
            for pattern in fs.scalar_patterns(kinds):
                try:
                    res = fn(*(fs.kind_example(k, s) for k, s in zip(kinds, pattern)))
                    outs = res if isinstance(res, tuple) else (res,)
                    got: object = [fs.describe(o.dtype, o.weak_type) for o in outs]
                except Exception as e:  # noqa: BLE001 - the class is the record
                    got = "!" + type(e).__name__
                if got != dtypes[fs.dtype_key(name, kinds)]:
                    out[fs.dtype_key(name, kinds, pattern)] = got
    return out


def main() -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np

    import fuzz_strategies as fs
    jax.config.update("jax_enable_x64", False)
    warnings.simplefilter("ignore")
    dtypes = {}
    for name in fs.UNARY + fs.BINARY:
        fn = getattr(jnp, name)
        arity = 1 if name in fs.UNARY else 2
        for kinds in fs.kind_tuples(arity):
            try:
                out = jax.eval_shape(fn, *(fs.kind_example(k) for k in kinds))
                outs = out if isinstance(out, tuple) else (out,)
                dtypes[fs.dtype_key(name, kinds)] = [fs.describe(o.dtype, o.weak_type)
                                                     for o in outs]
            except Exception as e:  # noqa: BLE001 - the class is the record
                dtypes[fs.dtype_key(name, kinds)] = "!" + type(e).__name__
    reduction_dtypes = {}
    for name in fs.REDUCTIONS:
        for kind in fs.X32:
            for requested in [None] + (fs.REQUESTED if name in fs.DTYPE_REDUCTIONS else []):
                kw = {} if requested is None else {"dtype": fs.np_dtype(requested)}
                key = fs.reduction_key(name, kind, requested)
                try:
                    out = jax.eval_shape(lambda x: getattr(jnp, name)(x, axis=0, **kw),
                                         np.zeros((2, 3), fs.np_dtype(kind)))
                    reduction_dtypes[key] = [fs.describe(out.dtype, out.weak_type)]
                except Exception as e:  # noqa: BLE001 - the class is the record
                    reduction_dtypes[key] = "!" + type(e).__name__
    # 0-d operands can take value-dependent paths (a concrete scalar exponent is
    # lax.integer_pow): recorded eagerly (two worker processes), kept only where the answer
    # differs from the (2,) one.
    names = fs.UNARY + fs.BINARY
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        parts = pool.map(_scalar_dtypes, [(names[0::2], dtypes), (names[1::2], dtypes)])
    scalar_dtypes = {k: v for part in parts for k, v in part.items()}
    differences = {}
    for diff_name, diff in fs.KNOWN_DIFFERENCES.items():
        for i, (jax_expr, _) in enumerate(diff.examples):
            differences[f"{diff_name}:{i}"] = fs.record_expression(jax_expr, jnp, jax, np)
    regressions = {expr: fs.record_expression(expr, jnp, jax, np) for expr in fs.REGRESSIONS}
    with open(OUT, "w") as f:
        json.dump({"jax_version": jax.__version__, "dtypes": dtypes,
                   "scalar_dtypes": scalar_dtypes, "reduction_dtypes": reduction_dtypes,
                   "regressions": regressions,
                   "differences": differences}, f, indent=0, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
