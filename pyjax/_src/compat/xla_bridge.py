"""JAX's backend registry (`jax._src.xla_bridge`, `jax.extend.backend`) over pyjax's one host
backend (backend/compiler.py's `Backend`, answering what libraries ask of XLA clients)."""
from __future__ import annotations

from typing import Any

from pyjax._src.backend.compiler import Backend, host_backend
from pyjax._src.parallel import devices as _devices


_backends: dict[str, Backend] = {}


def backends() -> dict[str, Backend]:
    """{platform name: backend}, created on first use."""
    if not _backends:
        _backends["cpu"] = host_backend
    return _backends


def get_backend(platform: Any = None) -> Backend:
    if platform not in (None, "cpu") and not isinstance(platform, Backend):
        raise RuntimeError(f"Unknown backend {platform}")
    return backends()["cpu"]


def clear_backends() -> None:
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
