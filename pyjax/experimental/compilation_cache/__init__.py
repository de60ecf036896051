"""`jax.experimental.compilation_cache`: the persistent compilation cache (its one module)."""
