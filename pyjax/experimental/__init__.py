"""`jax.experimental`: the host callback that may have side effects (re-export)."""
from pyjax._src.callback import io_callback  # noqa: F401
from pyjax._src.hijax.types import cur_qdd  # noqa: F401,E402  (jax.experimental.cur_qdd)
