"""pyjax.interpreters.partial_eval (JAX's `jax.interpreters.partial_eval`): re-exports only; see
pyjax/_src/compat/partial_eval.py."""
from pyjax._src.compat.partial_eval import *  # noqa: F401,F403
from pyjax._src.compat.partial_eval import __all__  # noqa: F401
