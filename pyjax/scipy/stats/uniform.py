"""`jax.scipy.stats.uniform` (re-exports only)."""
from pyjax._src.scipy.stats.uniform import (  # noqa: F401
    cdf, logpdf, pdf, ppf)
