"""pyjax.scipy.cluster.vq: vq (re-export)."""
from pyjax._src.scipy.cluster.vq import vq  # noqa: F401
