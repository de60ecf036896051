"""`jax.scipy.stats.logistic` (re-exports only)."""
from pyjax._src.scipy.stats.logistic import (  # noqa: F401
    cdf, isf, logpdf, pdf, ppf, sf)
