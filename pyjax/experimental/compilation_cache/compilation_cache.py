"""`jax.experimental.compilation_cache.compilation_cache`: set and reset the persistent cache
of native kernels (re-export)."""
from pyjax._src.backend.tier1.disk_cache import reset_cache, set_cache_dir  # noqa: F401
