"""pyjax.extend.source_info_util (JAX's `jax.extend.source_info_util`): re-exports only."""
from pyjax._src.compat.source_info_util import *  # noqa: F401,F403
from pyjax._src.compat.source_info_util import __all__  # noqa: F401
