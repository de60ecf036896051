"""`jax._src.xla_bridge`: the backend registry (pyjax/_src/compat/xla_bridge.py)."""
from pyjax._src.compat.xla_bridge import *  # noqa: F401,F403
from pyjax._src.compat.xla_bridge import (  # noqa: F401
    Backend, _backends, backends, default_backend, device_count, devices, get_backend,
    local_device_count, local_devices, process_count, process_index)
