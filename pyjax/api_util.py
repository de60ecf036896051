"""pyjax.api_util (JAX's `jax.api_util`): re-exports only; see pyjax/_src/compat/api_util.py."""
from pyjax._src.compat.api_util import *  # noqa: F401,F403
from pyjax._src.compat.api_util import __all__  # noqa: F401
