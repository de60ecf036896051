"""pyjax.scipy.integrate: trapezoid (re-export)."""
from pyjax._src.scipy.integrate import trapezoid  # noqa: F401
