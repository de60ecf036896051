"""`jax.scipy.stats.geom` (re-exports only)."""
from pyjax._src.scipy.stats.geom import (  # noqa: F401
    logpmf, pmf)
