"""Global configuration flags, read and set like `jax.config`.

Flags are plain attributes of one `Config` object so that hot paths read them with a single
attribute lookup (`config.x64`).  `config.update(name, value)` accepts JAX's option names.
"""
from __future__ import annotations

import os
from typing import Any


def _env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on", "t", "y")


# option name -> (attribute, default) ; attribute None means "accepted, no effect on NumPy".
_OPTIONS: dict[str, tuple[str, Any]] = {
    "jax_enable_x64": ("x64", False),
    "jax_platform_name": ("platform_name", "cpu"),
    "jax_platforms": ("platforms", "cpu"),
    "jax_default_matmul_precision": ("default_matmul_precision", None),
    "jax_numpy_rank_promotion": ("numpy_rank_promotion", "allow"),
    "jax_numpy_dtype_promotion": ("numpy_dtype_promotion", "standard"),
    "jax_disable_jit": ("disable_jit", False),
    "jax_debug_nans": ("debug_nans", False),
    "jax_debug_infs": ("debug_infs", False),
    "jax_log_compiles": ("log_compiles", False),
    "jax_traceback_filtering": ("traceback_filtering", "auto"),
    "jax_default_prng_impl": ("default_prng_impl", "threefry2x32"),
    "jax_threefry_partitionable": ("threefry_partitionable", True),
    "jax_enable_checks": ("enable_checks", False),
    "jax_num_cpu_devices": ("num_cpu_devices", 1),
}


class Config:
    """Holds every flag as an attribute; `update` is the only supported way to change them."""

    def __init__(self) -> None:
        for attr, default in _OPTIONS.values():
            object.__setattr__(self, attr, default)
        object.__setattr__(self, "x64", _env_bool("JAX_ENABLE_X64"))
        object.__setattr__(self, "disable_jit", _env_bool("JAX_DISABLE_JIT"))

    def update(self, name: str, value: Any) -> None:
        """Set option `name` (e.g. "jax_enable_x64") to `value`."""
        try:
            attr, _ = _OPTIONS[name]
        except KeyError:
            raise AttributeError(f"Unrecognized config option: {name}") from None
        if attr in ("x64", "disable_jit", "debug_nans", "debug_infs", "enable_checks"):
            value = bool(value)
        object.__setattr__(self, attr, value)

    def read(self, name: str) -> Any:
        """Value of option `name`."""
        return getattr(self, _OPTIONS[name][0])

    def __getattr__(self, name: str) -> Any:
        # `config.jax_enable_x64` reads like JAX's config object.
        if name in _OPTIONS:
            return getattr(self, _OPTIONS[name][0])
        raise AttributeError(f"Unrecognized config option: {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("use config.update(name, value) to change pyjax options")


config = Config()
