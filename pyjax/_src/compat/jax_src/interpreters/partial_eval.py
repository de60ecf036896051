"""`jax._src.interpreters.partial_eval` (pyjax/_src/compat/partial_eval.py)."""
from pyjax._src.compat.partial_eval import *  # noqa: F401,F403
