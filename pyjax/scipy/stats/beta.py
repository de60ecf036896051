"""`jax.scipy.stats.beta` (re-exports only)."""
from pyjax._src.scipy.stats.beta import (  # noqa: F401
    cdf, logcdf, logpdf, logsf, pdf, sf)
