"""JAX's backend registry (`jax._src.xla_bridge`, `jax.extend.backend`) over pyjax's one host
backend (parallel/devices.py's `Backend`, answering what libraries ask of XLA clients)."""
from __future__ import annotations

from typing import Any

from pyjax._src.parallel import devices as _devices
from pyjax._src.parallel.devices import Backend

_backends = _devices.initialized_backends


def backends() -> dict[str, Backend]:
    """{platform name: backend}, bringing the host backend up if it is not yet."""
    _devices.default_device()
    return _backends


def get_backend(platform: Any = None) -> Backend:
    _devices.check_backend(platform)
    return backends()["cpu"]


def clear_backends() -> None:
    """Forget the backend: the device count is read again on next use (as when JAX
    re-creates its clients, which chex's set_n_cpu_devices relies on)."""
    _devices._all_devices.cache_clear()
    _backends.clear()


def get_default_device() -> Any:
    return _devices.default_device()


default_backend = _devices.default_backend
devices = _devices.devices
local_devices = _devices.local_devices
device_count = _devices.device_count
local_device_count = _devices.local_device_count
process_index = _devices.process_index
process_count = _devices.process_count

__all__ = ["backends", "clear_backends", "get_backend", "get_default_device"]
