"""`jax.scipy.stats.pareto` (re-exports only)."""
from pyjax._src.scipy.stats.pareto import (  # noqa: F401
    cdf, logcdf, logpdf, logsf, pdf, ppf, sf)
