"""`jax._src.callback` (pyjax/_src/callback.py)."""
from pyjax._src.callback import *  # noqa: F401,F403
