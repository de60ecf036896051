"""Implementations behind `pyjax.nn` (built on lax and jnp)."""
