"""Where in the user's code an equation was staged: the innermost frames outside pyjax.

Recorded for every staged equation (a short walk up the stack), so errors about a value can
name the user's line that created it.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Iterator, NamedTuple

_PYJAX_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_MAX_FRAMES = 5
#: paths whose frames are never the user's: pyjax's own, and libraries that register
#: themselves (JAX's `traceback_util.register_exclusion`; flax edits the list directly)
excluded_paths: list[str] = [_PYJAX_DIR]


def register_exclusion(path: str) -> None:
    """Treat frames from files under `path` as library frames, not the user's."""
    excluded_paths.append(path)


def include_filename(filename: str) -> bool:
    """Whether a frame of `filename` is the user's (not under an excluded path)."""
    return not filename.startswith(tuple(excluded_paths))


class Frame(NamedTuple):
    file: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} ({self.function})"


def user_frames() -> tuple[Frame, ...]:
    """Up to five innermost frames of the caller outside pyjax (and registered libraries),
    innermost first."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None and len(frames) < _MAX_FRAMES:
        code = frame.f_code
        if include_filename(code.co_filename):
            frames.append(Frame(code.co_filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    return tuple(frames)


class NameStack(NamedTuple):
    """The scopes (`jax.named_scope`, transformation names) around an operation, outermost
    first; printed joined by '/'."""
    stack: tuple[str, ...] = ()

    def extend(self, name: str | tuple[str, ...]) -> "NameStack":
        return NameStack(self.stack + ((name,) if isinstance(name, str) else tuple(name)))

    def transform(self, name: str) -> "NameStack":
        return self.extend(f"{name}()")

    def wrap_name(self, name: str) -> str:
        return "/".join((*self.stack, name))

    def __str__(self) -> str:
        return "/".join(self.stack)


class _NameState(threading.local):
    stack: NameStack = NameStack()


name_state = _NameState()


@contextlib.contextmanager
def extend_name_stack(name: str) -> Iterator[NameStack]:
    """Push `name` onto this thread's name stack for the duration of the block."""
    previous = name_state.stack
    name_state.stack = previous.extend(name)
    try:
        yield name_state.stack
    finally:
        name_state.stack = previous


@contextlib.contextmanager
def set_name_stack(stack: NameStack) -> Iterator[None]:
    previous, name_state.stack = name_state.stack, stack
    try:
        yield
    finally:
        name_state.stack = previous
