"""pyjax.interpreters.batching (JAX's `jax.interpreters.batching`): re-exports only; see
pyjax/_src/compat/batching.py."""
from pyjax._src.compat.batching import *  # noqa: F401,F403
from pyjax._src.compat.batching import __all__  # noqa: F401
