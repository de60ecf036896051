"""Implementations behind `pyjax.scipy.stats`: one module per distribution, as JAX lays them out."""
