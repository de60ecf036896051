"""pyjax.custom_derivatives (JAX's `jax.custom_derivatives`): re-exports only."""
from pyjax._src.compat.custom_derivatives import *  # noqa: F401,F403
from pyjax._src.compat.custom_derivatives import __all__  # noqa: F401
