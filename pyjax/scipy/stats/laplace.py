"""`jax.scipy.stats.laplace` (re-exports only)."""
from pyjax._src.scipy.stats.laplace import (  # noqa: F401
    cdf, logpdf, pdf)
