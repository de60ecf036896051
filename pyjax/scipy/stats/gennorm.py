"""`jax.scipy.stats.gennorm` (re-exports only)."""
from pyjax._src.scipy.stats.gennorm import (  # noqa: F401
    cdf, logpdf, pdf)
