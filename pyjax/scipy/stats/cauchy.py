"""`jax.scipy.stats.cauchy` (re-exports only)."""
from pyjax._src.scipy.stats.cauchy import (  # noqa: F401
    cdf, isf, logcdf, logpdf, logsf, pdf, ppf, sf)
