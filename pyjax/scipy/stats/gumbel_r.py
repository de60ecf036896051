"""`jax.scipy.stats.gumbel_r` (re-exports only)."""
from pyjax._src.scipy.stats.gumbel_r import (  # noqa: F401
    cdf, logcdf, logpdf, logsf, pdf, ppf, sf)
