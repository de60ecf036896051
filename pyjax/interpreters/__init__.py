"""pyjax.interpreters (JAX's `jax.interpreters`): rule registries of the transformations."""
from pyjax.interpreters import ad, batching, mlir, partial_eval  # noqa: F401
