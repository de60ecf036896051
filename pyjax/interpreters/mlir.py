"""pyjax.interpreters.mlir (JAX's `jax.interpreters.mlir`): re-exports only; see
pyjax/_src/compat/mlir.py."""
from pyjax._src.compat.mlir import *  # noqa: F401,F403
from pyjax._src.compat.mlir import __all__  # noqa: F401
