"""Global configuration flags, read and set like `jax.config`.

Flags are plain attributes of one `Config` object so that hot paths read them with a single
attribute lookup (`config.x64`).  `config.update(name, value)` accepts JAX's option names.
"""
from __future__ import annotations

import functools
import os
import threading
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
    "eager_constant_folding": ("eager_constant_folding", False),
    "jax_softmax_custom_jvp": ("softmax_custom_jvp", False),
}


#: options that change the jaxpr a trace produces (so they key trace caches)
_TRACE_OPTIONS = ("x64", "numpy_rank_promotion", "numpy_dtype_promotion",
                  "default_matmul_precision", "default_prng_impl", "threefry_partitionable",
                  "eager_constant_folding", "debug_nans", "debug_infs", "softmax_custom_jvp")

#: options whose value must be one of a few strings
_ENUM_CHOICES = {"numpy_rank_promotion": ("allow", "warn", "raise")}


class _Overrides(threading.local):
    """This thread's context-manager settings (attribute -> value), over the global ones."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}


#: the process-wide values, and this thread's overrides (one store each, read by every flag)
config_global: dict[str, Any] = {attr: default for attr, default in _OPTIONS.values()}
config_global["x64"] = _env_bool("JAX_ENABLE_X64")
config_global["disable_jit"] = _env_bool("JAX_DISABLE_JIT")
config_local = _Overrides()


class Config:
    """Every flag, read as an attribute (`config.x64`).  `update` sets the process-wide value;
    the context managers (`enable_x64(...)`, `disable_jit()`, ...) override it for the current
    thread only, as JAX's do, so threads toggling options never see each other's settings."""

    def __init__(self) -> None:
        object.__setattr__(self, "_global", config_global)
        object.__setattr__(self, "_global_trace_key", None)
        object.__setattr__(self, "_local", config_local)

    def update(self, name: str, value: Any) -> None:
        """Set option `name` (e.g. "jax_enable_x64") to `value`, for every thread."""
        attr, value = _validated(name, value)
        self._global[attr] = value
        object.__setattr__(self, "_global_trace_key", None)

    def trace_key(self) -> tuple:
        """The options that change what tracing produces, as this thread sees them: part of
        every trace cache's key (jit's), as JAX makes them part of its."""
        overrides = self._local.values
        if not overrides:
            key = self._global_trace_key
            if key is None:
                key = tuple(self._global[a] for a in _TRACE_OPTIONS)
                object.__setattr__(self, "_global_trace_key", key)
            return key
        return tuple(overrides.get(a, self._global[a]) for a in _TRACE_OPTIONS)

    def read(self, name: str) -> Any:
        """Value of option `name` in this thread."""
        return getattr(self, _OPTIONS[name][0])

    def _override(self, name: str, value: Any) -> Any:
        """Set option `name` for this thread; returns the token `_restore` takes back."""
        attr, value = _validated(name, value)
        overrides = self._local.values
        previous = overrides.get(attr, _UNSET)
        overrides[attr] = value
        return attr, previous

    def _restore(self, token: Any) -> None:
        attr, previous = token
        if previous is _UNSET:
            self._local.values.pop(attr, None)
        else:
            self._local.values[attr] = previous

    def __getattr__(self, name: str) -> Any:
        # `config.jax_enable_x64` reads like JAX's config object.
        if name in _OPTIONS:
            return getattr(self, _OPTIONS[name][0])
        raise AttributeError(f"Unrecognized config option: {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("use config.update(name, value) to change pyjax options")


_UNSET = object()


def _validated(name: str, value: Any) -> tuple[str, Any]:
    try:
        attr, _ = _OPTIONS[name]
    except KeyError:
        raise AttributeError(f"Unrecognized config option: {name}") from None
    if attr in ("x64", "disable_jit", "debug_nans", "debug_infs", "enable_checks",
                "eager_constant_folding", "threefry_partitionable"):
        value = bool(value)
    choices = _ENUM_CHOICES.get(attr)
    if choices is not None and value not in choices:
        raise ValueError(f"new enum value must be in {list(choices)}, got {value} of type "
                         f"{type(value)}.")
    return attr, value


def _option_property(attr: str) -> property:
    """A flag's value: this thread's override if there is one, else the global value.  (Hot:
    read on every dispatch; the getter closes over the two stores to skip attribute lookups.)"""
    def get(self: Config, _local: Any = config_local, _global: dict = config_global) -> Any:
        overrides = _local.values
        if overrides and attr in overrides:
            return overrides[attr]
        return _global[attr]
    return property(get)


for _attr, _ in _OPTIONS.values():
    setattr(Config, _attr, _option_property(_attr))


config = Config()


_NO_DEFAULT = object()


class State:
    """One option as JAX exposes it at top level (`jax.enable_x64`): `.value` reads it;
    calling it gives a context manager (or decorator) that sets it for the current thread for
    a block and restores it after."""

    def __init__(self, option: str, default_context_value: Any = _NO_DEFAULT):
        self._option = option
        self._default_context_value = default_context_value
        self.__name__ = option.removeprefix("jax_")

    @property
    def value(self) -> Any:
        return config.read(self._option)

    def __call__(self, new_value: Any = _NO_DEFAULT) -> "_StateContext":
        if new_value is _NO_DEFAULT:
            if self._default_context_value is _NO_DEFAULT:
                raise TypeError(f"Context manager for {self.__name__} config option requires "
                                "an argument representing the new value for the config "
                                "option.")
            new_value = self._default_context_value
        return _StateContext(self._option, new_value)

    def __bool__(self) -> bool:
        raise TypeError("bool() not supported for instances of type 'State' (did you mean to "
                        "use 'State.value' instead?)")


class _StateContext:
    """Sets an option for the current thread while entered (one object may be entered by
    several threads at once: each keeps its own tokens)."""

    __slots__ = ("option", "new_value", "tokens")

    def __init__(self, option: str, new_value: Any):
        self.option, self.new_value = option, new_value
        self.tokens: dict[int, list] = {}

    def __enter__(self) -> None:
        token = config._override(self.option, self.new_value)
        self.tokens.setdefault(threading.get_ident(), []).append(token)

    def __exit__(self, *exc_info: Any) -> None:
        stack = self.tokens[threading.get_ident()]
        config._restore(stack.pop())
        if not stack:
            del self.tokens[threading.get_ident()]

    def __call__(self, fun: Any) -> Any:
        @functools.wraps(fun)
        def with_option(*args: Any, **kwargs: Any) -> Any:
            with _StateContext(self.option, self.new_value):
                return fun(*args, **kwargs)
        return with_option


# the options pyjax honours, as top-level context managers (jax.enable_x64(True): ...)
enable_x64 = State("jax_enable_x64", True)
enable_checks = State("jax_enable_checks", True)
threefry_partitionable = State("jax_threefry_partitionable", True)
default_prng_impl = State("jax_default_prng_impl")
numpy_rank_promotion = State("jax_numpy_rank_promotion")


def disable_jit(disable: bool = True) -> _StateContext:
    """Context manager (or decorator) under which jit runs its function op by op, eagerly."""
    return _StateContext("jax_disable_jit", disable)


def ensure_compile_time_eval() -> _StateContext:
    """Context manager under which operations on concrete values are computed while tracing,
    even inside jit, so their results can drive Python control flow."""
    return _StateContext("eager_constant_folding", True)
