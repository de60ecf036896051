"""`jax.scipy.stats.binom` (re-exports only)."""
from pyjax._src.scipy.stats.binom import (  # noqa: F401
    logpmf, pmf)
