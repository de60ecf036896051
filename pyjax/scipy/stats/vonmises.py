"""`jax.scipy.stats.vonmises` (re-exports only)."""
from pyjax._src.scipy.stats.vonmises import (  # noqa: F401
    logpdf, pdf)
