"""`jax.scipy.stats.multinomial` (re-exports only)."""
from pyjax._src.scipy.stats.multinomial import (  # noqa: F401
    logpmf, pmf)
