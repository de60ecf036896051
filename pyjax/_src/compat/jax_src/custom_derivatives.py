"""`jax._src.custom_derivatives` (pyjax/_src/transforms/custom_derivatives.py)."""
from pyjax._src.compat.custom_derivatives import *  # noqa: F401,F403
