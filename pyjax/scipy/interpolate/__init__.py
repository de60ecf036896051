"""pyjax.scipy.interpolate: RegularGridInterpolator (re-export)."""
from pyjax._src.scipy.interpolate import RegularGridInterpolator  # noqa: F401
