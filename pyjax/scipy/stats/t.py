"""`jax.scipy.stats.t` (re-exports only)."""
from pyjax._src.scipy.stats.t import (  # noqa: F401
    logpdf, pdf)
