"""Devices: N host (CPU) devices; every concrete array lives on the first unless placed.

The count comes from PYJAX_NUM_CPU_DEVICES, JAX_NUM_CPU_DEVICES or
XLA_FLAGS=--xla_force_host_platform_device_count=N (default 1), read once at first use.
After jax.distributed.initialize() every process has N local devices; the global list holds
all processes' devices, process by process (ids process * N + local).
"""
from __future__ import annotations

import functools
import os
import re
from typing import Any, Callable


class Device:
    """One CPU device, printed like JAX's (`CpuDevice(id=0)`)."""

    platform = "cpu"
    device_kind = "cpu"
    client = None

    def __init__(self, id: int, process_index: int = 0):  # noqa: A002 - JAX's name
        self.id = id
        self.process_index = process_index
        self.host_id = process_index

    def __repr__(self) -> str:
        return f"CpuDevice(id={self.id})"

    def __str__(self) -> str:
        return f"cpu:{self.id}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("cpu", self.id))

    @property
    def local_hardware_id(self) -> int:
        return self.id


def _configured_count() -> int:
    for name in ("PYJAX_NUM_CPU_DEVICES", "JAX_NUM_CPU_DEVICES"):
        if os.environ.get(name):
            return max(1, int(os.environ[name]))
    match = re.search(r"--xla_force_host_platform_device_count=(\d+)",
                      os.environ.get("XLA_FLAGS", ""))
    if match:
        return max(1, int(match.group(1)))
    from pyjax._src.config import config
    return max(1, int(config.num_cpu_devices))


class Backend:
    """The one backend, NumPy on the host CPU (what JAX calls an XLA client): its platform,
    devices and process layout."""

    platform = "cpu"
    platform_version = "pyjax (NumPy on the host)"

    def devices(self) -> list:
        return devices()

    def local_devices(self) -> list:
        return local_devices()

    def device_count(self) -> int:
        return device_count()

    def local_device_count(self) -> int:
        return local_device_count()

    def process_index(self) -> int:
        return process_index()

    def __repr__(self) -> str:
        return "<pyjax cpu backend>"


host_backend = Backend()

#: backends brought up so far, by platform (JAX's `xla_bridge._backends`): filled when the
#: devices are first used, after which the device count can no longer change
initialized_backends: dict[str, Backend] = {}


class _Layout:
    """This process's place in a multi-process job (one process unless initialized)."""
    process_index = 0
    process_count = 1


#: called when the devices are listed anew (a distributed job starting or ending): callers
#: that keep what they worked out for the old devices forget it (pmap's short calls)
on_relayout: list[Callable[[], None]] = []


def set_process_layout(index: int, count: int) -> None:
    """Called by jax.distributed: the devices are listed again at next use."""
    _Layout.process_index, _Layout.process_count = index, count
    _all_devices.cache_clear()
    for forget in on_relayout:
        forget()


@functools.cache
def _all_devices() -> tuple[Device, ...]:
    initialized_backends["cpu"] = host_backend
    n = _configured_count()
    return tuple(Device(p * n + i, p) for p in range(_Layout.process_count) for i in range(n))


def _local_devices() -> tuple[Device, ...]:
    everything = _all_devices()
    if _Layout.process_count == 1:
        return everything
    return tuple(d for d in everything if d.process_index == _Layout.process_index)


def check_backend(backend: Any) -> None:
    """Raise JAX's RuntimeError for a platform that is not present (only the CPU is)."""
    if backend is None or backend is host_backend or backend == "cpu":
        return
    if backend == "gpu":
        raise RuntimeError("Unknown backend: 'gpu' requested, but no platforms that are "
                           "instances of gpu are present. Platforms present are: cpu")
    raise RuntimeError(f"Unknown backend {backend}. Available backends are ['cpu']")


def default_device() -> Device:
    return _local_devices()[0]


def devices(backend: Any = None) -> list[Device]:
    """All devices of every process, process by process."""
    check_backend(backend)
    return list(_all_devices())


def local_devices(process_index: int | None = None, backend: Any = None,
                  host_id: int | None = None) -> list[Device]:
    check_backend(backend)
    index = process_index if process_index is not None else host_id
    if index is None or index == _Layout.process_index:
        return list(_local_devices())
    return [d for d in _all_devices() if d.process_index == index]


def device_count(backend: Any = None) -> int:
    check_backend(backend)
    return len(_all_devices())


def local_device_count(backend: Any = None) -> int:
    check_backend(backend)
    return len(_local_devices())


def process_index(backend: Any = None) -> int:
    return _Layout.process_index


def process_count(backend: Any = None) -> int:
    return _Layout.process_count


def default_backend() -> str:
    return "cpu"

