"""pyjax.extend.core (JAX's `jax.extend.core`): re-exports only; see
pyjax/_src/compat/extend_core.py."""
from pyjax._src.compat.extend_core import *  # noqa: F401,F403
from pyjax._src.compat.extend_core import __all__  # noqa: F401
from pyjax._src import lazy_loader as _lazy  # noqa: E402

_lazy.load_deferred()  # `primitives` lists every family's primitives, as before issue 16
del _lazy
