"""pyjax.extend.backend (JAX's `jax.extend.backend`): re-exports only."""
from pyjax._src.compat.xla_bridge import *  # noqa: F401,F403
from pyjax._src.compat.xla_bridge import __all__  # noqa: F401
