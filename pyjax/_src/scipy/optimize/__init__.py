"""Implementations behind `pyjax.scipy.optimize` (JAX's jax/_src/scipy/optimize)."""
