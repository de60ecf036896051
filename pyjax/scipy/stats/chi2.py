"""`jax.scipy.stats.chi2` (re-exports only)."""
from pyjax._src.scipy.stats.chi2 import (  # noqa: F401
    cdf, logcdf, logpdf, logsf, pdf, sf)
