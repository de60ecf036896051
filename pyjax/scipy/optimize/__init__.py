"""pyjax.scipy.optimize: SciPy's minimize on pyjax (re-exports only)."""
from pyjax._src.scipy.optimize.minimize import OptimizeResults, minimize  # noqa: F401
