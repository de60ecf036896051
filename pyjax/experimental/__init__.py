"""`jax.experimental`: the host callback that may have side effects (re-export)."""
from pyjax._src.callback import io_callback  # noqa: F401
