"""Implementations behind `pyjax.scipy` (built on lax and jnp)."""
