"""`jax.scipy.stats.gamma` (re-exports only)."""
from pyjax._src.scipy.stats.gamma import (  # noqa: F401
    cdf, logcdf, logpdf, logsf, pdf, sf)
