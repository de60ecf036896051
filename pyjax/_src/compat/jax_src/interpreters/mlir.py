"""`jax._src.interpreters.mlir` (pyjax/_src/compat/mlir.py)."""
from pyjax._src.compat.mlir import *  # noqa: F401,F403
