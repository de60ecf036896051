"""Submodules loaded on first attribute access, so `import pyjax` stays fast (`pyjax.scipy`...)."""
from __future__ import annotations

import importlib
from typing import Any, Callable


def attach(package: str, submodules: list[str]) -> tuple[Callable, Callable, list[str]]:
    """Return `__getattr__`, `__dir__` and `__all__` for a package whose submodules load lazily."""
    names = list(submodules)

    def __getattr__(name: str) -> Any:
        if name in names:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return names

    return __getattr__, __dir__, names
