"""Small top-level helpers of `jax`: name scopes, the live-array list and the environment
report.  Scopes push their name onto the thread's name stack (core/source_info; jaxprs print
none, as JAX's do not)."""
from __future__ import annotations

import contextlib
import functools
import gc
import platform as _platform
import sys
from typing import Any, Callable, Iterator, TypeVar

import numpy as np

from pyjax._src.core.source_info import extend_name_stack

F = TypeVar("F", bound=Callable[..., Any])


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """Context manager naming the operations staged inside it (`with jax.named_scope("mlp"):`)."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    with extend_name_stack(name):
        yield


def named_call(fun: F, *, name: str | None = None) -> F:
    """`fun` wrapped so its operations run under a scope named `name` (default: its name)."""
    scope = name if name is not None else getattr(fun, "__name__", "named_call")

    @functools.wraps(fun)
    def named(*args: Any, **kwargs: Any) -> Any:
        with named_scope(scope):
            return fun(*args, **kwargs)
    return named  # type: ignore[return-value]


def live_arrays(platform: str | None = None) -> list:
    """Every concrete array still alive in this process (found through the garbage
    collector, so creating arrays costs nothing extra)."""
    from pyjax._src.core.array import ArrayImpl
    from pyjax._src.parallel.devices import default_backend
    if platform is not None and platform != default_backend():
        return []
    return [obj for obj in gc.get_objects() if isinstance(obj, ArrayImpl)]  # (and pending)


def print_environment_info(return_string: bool = False) -> str | None:
    """Versions of pyjax, NumPy and Python, the devices and the platform, as JAX reports them."""
    from pyjax import __version__
    from pyjax._src.parallel.devices import default_backend, devices, process_count
    python_version = sys.version.replace("\n", " ")
    info = "\n".join([
        f"jax:    {__version__} (pyjax)",
        f"numpy:  {np.__version__}",
        f"python: {python_version}",
        f"device info: {default_backend()}-{len(devices())}, {len(devices())} local devices\"",
        f"process_count: {process_count()}",
        f"platform: {_platform.uname()}",
    ]) + "\n"
    if return_string:
        return info
    print(info)
    return None
