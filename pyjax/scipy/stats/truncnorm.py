"""`jax.scipy.stats.truncnorm` (re-exports only)."""
from pyjax._src.scipy.stats.truncnorm import (  # noqa: F401
    cdf, logcdf, logpdf, logsf, pdf, sf)
