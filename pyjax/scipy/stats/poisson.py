"""`jax.scipy.stats.poisson` (re-exports only)."""
from pyjax._src.scipy.stats.poisson import (  # noqa: F401
    cdf, entropy, logpmf, pmf)
