"""`jax.scipy.stats.dirichlet` (re-exports only)."""
from pyjax._src.scipy.stats.dirichlet import (  # noqa: F401
    logpdf, pdf)
