"""`jax.scipy.stats.gumbel_l` (re-exports only)."""
from pyjax._src.scipy.stats.gumbel_l import (  # noqa: F401
    cdf, logcdf, logpdf, logsf, pdf, ppf, sf)
