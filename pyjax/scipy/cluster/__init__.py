"""pyjax.scipy.cluster: the vq submodule."""
from pyjax.scipy.cluster import vq as vq  # noqa: F401
