"""pyjax.interpreters.ad (JAX's `jax.interpreters.ad`): re-exports only; see
pyjax/_src/compat/ad.py."""
from pyjax._src.compat.ad import *  # noqa: F401,F403
from pyjax._src.compat.ad import __all__  # noqa: F401
