"""`jax._src.interpreters.batching` (pyjax/_src/compat/batching.py)."""
from pyjax._src.compat.batching import *  # noqa: F401,F403
