"""pyjax.flatten_util (re-exports only)."""
from pyjax._src.flatten_util import ravel_pytree  # noqa: F401
