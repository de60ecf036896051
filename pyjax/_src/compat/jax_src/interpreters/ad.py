"""`jax._src.interpreters.ad` (pyjax/_src/compat/ad.py)."""
from pyjax._src.compat.ad import *  # noqa: F401,F403
