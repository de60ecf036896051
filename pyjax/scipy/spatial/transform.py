"""pyjax.scipy.spatial.transform: Rotation and Slerp (re-exports)."""
from pyjax._src.scipy.spatial.transform import Rotation, Slerp  # noqa: F401
