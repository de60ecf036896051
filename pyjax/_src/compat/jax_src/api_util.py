"""`jax._src.api_util` (pyjax/_src/compat/api_util.py)."""
from pyjax._src.compat.api_util import *  # noqa: F401,F403
