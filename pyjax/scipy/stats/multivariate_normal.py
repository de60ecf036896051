"""`jax.scipy.stats.multivariate_normal` (re-exports only)."""
from pyjax._src.scipy.stats.multivariate_normal import (  # noqa: F401
    logpdf, pdf)
