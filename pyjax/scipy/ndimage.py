"""pyjax.scipy.ndimage: map_coordinates (re-export)."""
from pyjax._src.scipy.ndimage import map_coordinates  # noqa: F401
