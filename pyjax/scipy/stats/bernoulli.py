"""`jax.scipy.stats.bernoulli` (re-exports only)."""
from pyjax._src.scipy.stats.bernoulli import (  # noqa: F401
    cdf, logpmf, pmf, ppf)
