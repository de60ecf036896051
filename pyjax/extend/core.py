"""pyjax.extend.core (JAX's `jax.extend.core`): re-exports only; see
pyjax/_src/compat/extend_core.py."""
from pyjax._src.compat.extend_core import *  # noqa: F401,F403
from pyjax._src.compat.extend_core import __all__  # noqa: F401
