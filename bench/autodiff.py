"""grad of a 784-512-512-10 tanh MLP loss (batch 128): ms per call, eager and jit, against a
hand-written NumPy backprop, and JAX when it is importable — all in one run.

    .venv/bin/python bench/autodiff.py
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

SIZES = [784, 512, 512, 10]
BATCH = 128


def init(rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    return [((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
             np.zeros(n, np.float32)) for m, n in zip(SIZES[:-1], SIZES[1:])]


def make_loss(jnp):
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jnp.tanh(h @ w + b)
        w, b = params[-1]
        return jnp.mean((h @ w + b - y) ** 2)
    return loss


def numpy_grad(params, x, y):
    """Backprop by hand: the baseline."""
    acts, h = [x], x
    for w, b in params[:-1]:
        h = np.tanh(h @ w + b)
        acts.append(h)
    w, b = params[-1]
    out = h @ w + b
    d = 2 * (out - y) / out.size
    grads = [(acts[-1].T @ d, d.sum(0))]
    d = d @ w.T
    for (w, b), a_in, a_out in zip(reversed(params[:-1]), reversed(acts[:-1]), reversed(acts[1:])):
        d = d * (1 - a_out ** 2)
        grads.append((a_in.T @ d, d.sum(0)))
        d = d @ w.T
    return grads[::-1]


def ms_per_call(fn, number: int = 5, repeat: int = 5) -> float:
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e3


def measure(jax, jnp, params, x, y) -> dict[str, float]:
    p = [(jnp.asarray(w), jnp.asarray(b)) for w, b in params]
    xs, ys = jnp.asarray(x), jnp.asarray(y)
    g = jax.grad(make_loss(jnp))
    gj = jax.jit(g)
    w0 = p[0][0][:, :64]
    jac_fwd, jac_rev = jax.jacfwd(jnp.tanh), jax.jacrev(lambda v: jnp.tanh(v @ w0.T))
    v64 = xs[0, :64]
    block = jax.block_until_ready
    return {"grad eager": ms_per_call(lambda: block(g(p, xs, ys))),
            "grad jit": ms_per_call(lambda: block(gj(p, xs, ys))),
            "jacfwd tanh 64": ms_per_call(lambda: block(jac_fwd(v64))),
            "jacrev 64->784": ms_per_call(lambda: block(jac_rev(v64)))}


def main() -> None:
    rng = np.random.default_rng(0)
    params = init(rng)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.standard_normal((BATCH, SIZES[-1])).astype(np.float32)
    import pyjax
    import pyjax.numpy as pjnp
    results = {"pyjax": measure(pyjax, pjnp, params, x, y)}
    results["numpy (hand backprop)"] = {"grad eager": ms_per_call(lambda: numpy_grad(params, x, y))}
    if importlib.util.find_spec("jax") is not None:
        import jax
        import jax.numpy as jjnp
        results["jax"] = measure(jax, jjnp, params, x, y)
    names = list(results)
    print(f"{'ms per call':16s}" + "".join(f"{n:>24s}" for n in names))
    for row in ("grad eager", "grad jit", "jacfwd tanh 64", "jacrev 64->784"):
        cells = "".join(f"{results[n][row]:24.2f}" if row in results[n] else f"{'-':>24s}"
                        for n in names)
        print(f"{row:16s}{cells}")


if __name__ == "__main__":
    main()
