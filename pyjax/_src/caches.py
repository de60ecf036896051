"""The caches of traced and compiled functions, so that jax.clear_caches can empty them all:
each module registers how to clear its own cache where it creates it."""
from __future__ import annotations

from typing import Callable

_clearers: list[Callable[[], None]] = []


def register(clear: Callable[[], None]) -> None:
    """Add a cache's clear function (called by `clear_all`)."""
    _clearers.append(clear)


def clear_all() -> None:
    """Empty every registered cache; the next call of anything traces and compiles again."""
    for clear in _clearers:
        clear()
