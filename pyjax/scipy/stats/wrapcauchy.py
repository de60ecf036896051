"""`jax.scipy.stats.wrapcauchy` (re-exports only)."""
from pyjax._src.scipy.stats.wrapcauchy import (  # noqa: F401
    logpdf, pdf)
