"""`jax._src.interpreters`: the transformations' rule registries (pyjax/_src/compat/)."""
from pyjax._src.compat import ad, batching, mlir, partial_eval  # noqa: F401
