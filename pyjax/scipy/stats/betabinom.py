"""`jax.scipy.stats.betabinom` (re-exports only)."""
from pyjax._src.scipy.stats.betabinom import (  # noqa: F401
    logpmf, pmf)
