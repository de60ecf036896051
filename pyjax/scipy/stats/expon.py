"""`jax.scipy.stats.expon` (re-exports only)."""
from pyjax._src.scipy.stats.expon import (  # noqa: F401
    cdf, logcdf, logpdf, logsf, pdf, ppf, sf)
