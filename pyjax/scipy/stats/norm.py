"""`jax.scipy.stats.norm` (re-exports only)."""
from pyjax._src.scipy.stats.norm import (  # noqa: F401
    cdf, isf, logcdf, logpdf, logsf, pdf, ppf, sf)
