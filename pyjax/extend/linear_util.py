"""pyjax.extend.linear_util (JAX's `jax.extend.linear_util`): re-exports only."""
from pyjax._src.compat.linear_util import *  # noqa: F401,F403
from pyjax._src.compat.linear_util import __all__  # noqa: F401
