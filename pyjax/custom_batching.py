"""jax.custom_batching: user-defined vmap rules (custom_vmap, sequential_vmap)."""
from pyjax._src.custom_batching import (  # noqa: F401
    custom_vmap as custom_vmap, sequential_vmap as sequential_vmap)
