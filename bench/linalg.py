"""jnp.linalg: ms per call of solve, cholesky, svd and eigh on one 512x512 matrix and on a batch
of 1000 4x4 matrices, and of grad(slogdet), in pyjax and (when importable) JAX, in one run.

    PYTHONPATH=. /work/oracle/bin/python bench/linalg.py
"""
from __future__ import annotations

import os
import sys

# bench/random.py would shadow the standard library's `random` for scripts run from bench/.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

import importlib.util  # noqa: E402
import timeit  # noqa: E402

import numpy as np  # noqa: E402


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((512, 512)).astype(np.float32)
    ab = rng.standard_normal((1000, 4, 4)).astype(np.float32)
    eye4 = np.eye(4, dtype=np.float32)
    return {
        "a": a, "spd": (a @ a.T / 512 + np.eye(512, dtype=np.float32)).astype(np.float32),
        "b": rng.standard_normal((512,)).astype(np.float32),
        "ab": ab, "spdb": (ab @ ab.transpose(0, 2, 1) + 4 * eye4).astype(np.float32),
        "bb": rng.standard_normal((1000, 4, 1)).astype(np.float32),
    }


def cases(jax, jnp, d: dict) -> list[tuple[str, object, tuple]]:
    """(label, function, arguments); results are blocked on inside the timed call."""
    la = jnp.linalg
    grad_slogdet = jax.grad(lambda x: la.slogdet(x)[1])
    grad_slogdet_b = jax.grad(lambda x: la.slogdet(x)[1].sum())
    return [
        ("solve 512x512", la.solve, (d["a"], d["b"])),
        ("cholesky 512x512", la.cholesky, (d["spd"],)),
        ("svd 512x512", la.svd, (d["a"],)),
        ("eigh 512x512", la.eigh, (d["spd"],)),
        ("grad slogdet 512x512", grad_slogdet, (d["a"],)),
        ("solve 1000x4x4", la.solve, (d["spdb"], d["bb"])),
        ("cholesky 1000x4x4", la.cholesky, (d["spdb"],)),
        ("svd 1000x4x4", la.svd, (d["ab"],)),
        ("eigh 1000x4x4", la.eigh, (d["spdb"],)),
        ("grad slogdet 1000x4x4", grad_slogdet_b, (d["ab"],)),
    ]


def ms_per_call(jax, fn, args, number: int, repeat: int = 5) -> float:
    def call():
        jax.block_until_ready(fn(*args))
    call()
    if jax.__name__ == "pyjax":  # the steady state: pyjax's background kernels compiled (as
        from pyjax._src.backend import tier1  # JAX's programs are after their first call)
        tier1.wait()
    return min(timeit.repeat(call, number=number, repeat=repeat)) / number * 1e3


def main() -> None:
    import pyjax
    import pyjax.numpy as pjnp
    d = inputs()
    impls = [("pyjax", pyjax, pjnp)]
    if importlib.util.find_spec("jax") is not None:
        import jax
        import jax.numpy as jjnp
        impls.append(("jax", jax, jjnp))
    rows = []
    for label_impl, mod, jnp in impls:
        args_cast = {k: jnp.asarray(v) for k, v in d.items()}  # each library's own arrays
        for label, fn, args in cases(mod, jnp, args_cast):
            number = 3 if "512" in label else 20
            rows.append((label, label_impl, ms_per_call(mod, fn, args, number)))
    table: dict[str, dict[str, float]] = {}
    for label, impl, ms in rows:
        table.setdefault(label, {})[impl] = ms
    print(f"{'case':<24}{'pyjax ms':>10}{'jax ms':>10}{'ratio':>8}")
    for label, times in table.items():
        jax_ms = times.get("jax")
        ratio = f"{times['pyjax'] / jax_ms:8.2f}" if jax_ms else f"{'-':>8}"
        jax_col = f"{jax_ms:10.3f}" if jax_ms else f"{'-':>10}"
        print(f"{label:<24}{times['pyjax']:10.3f}{jax_col}{ratio}")


if __name__ == "__main__":
    main()
