"""jax.distributed: several processes (ranks of an MPI job), each with its local devices."""
from pyjax._src.parallel.distributed import (  # noqa: F401
    initialize, is_initialized, shutdown)
