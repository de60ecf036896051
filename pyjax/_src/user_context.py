"""`jax.make_user_context`: a user-defined value that keys jit's caches.  Each context is a
new trace option (config.add_trace_option): a `with ctx(value):` block sets it for the current
thread, `ctx.set_global(value)` for every thread, and a function jitted under a value it has
not been traced with is traced (and compiled) again."""
from __future__ import annotations

import itertools
import threading
from typing import Any

from pyjax._src import config as config_lib

_numbers = itertools.count()
_lock = threading.Lock()


class UserContext:
    """`with ctx(new_value):` — the value for this thread while inside."""

    __slots__ = ("_config", "_new_value", "_prev_value")

    def __init__(self, config: "UserConfig", new_value: Any):
        self._config, self._new_value = config, new_value

    def __enter__(self) -> None:
        self._prev_value = self._config._swap_local(self._new_value)

    def __exit__(self, *exc_info: Any) -> None:
        self._config._set_local(self._prev_value)


class UserConfig:
    """A user context: `.value` (this thread's), `get_global`/`set_global`, and called with a
    value, a context manager setting it."""

    def __init__(self, default_value: Any):
        with _lock:
            self._attr = f"user_context_{next(_numbers)}"
            config_lib.add_trace_option(self._attr, default_value)

    @property
    def value(self) -> Any:
        local = config_lib.config_local.values
        if self._attr in local:
            return local[self._attr]
        return config_lib.config_global[self._attr]

    def get_global(self) -> Any:
        return config_lib.config_global[self._attr]

    def set_global(self, new_value: Any) -> None:
        config_lib.config_global[self._attr] = new_value
        config_lib.config._new_global_trace_key()

    def _swap_local(self, new_value: Any) -> Any:
        local = config_lib.config_local.values
        previous = local.get(self._attr, config_lib._UNSET)
        local[self._attr] = new_value
        return previous

    def _set_local(self, value: Any) -> None:
        local = config_lib.config_local.values
        if value is config_lib._UNSET:
            local.pop(self._attr, None)
        else:
            local[self._attr] = value

    def __call__(self, new_value: Any) -> UserContext:
        return UserContext(self, new_value)


def make_user_context(default_value: Any = None) -> UserConfig:
    """A jit-cache-sensitive context: when its value changes, jitted functions are traced and
    compiled again.  Make contexts up front (making one is not thread-safe); using one is.

        my_context = jax.make_user_context(default_value=None)
        with my_context(1):
            f(1.)
        with my_context(2):
            f(1.)  # traced again
    """
    return UserConfig(default_value)
