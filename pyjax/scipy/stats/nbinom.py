"""`jax.scipy.stats.nbinom` (re-exports only)."""
from pyjax._src.scipy.stats.nbinom import (  # noqa: F401
    logpmf, pmf)
