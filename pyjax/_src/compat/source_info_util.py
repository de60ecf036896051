"""`jax.extend.source_info_util`: where an operation comes from (the user's frames) and the
scopes it runs under, over pyjax's core/source_info."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, NamedTuple

from pyjax._src.core.source_info import (  # noqa: F401  (re-exported)
    Frame, NameStack, extend_name_stack, name_state, register_exclusion, set_name_stack,
    user_frames)


class SourceInfo(NamedTuple):
    """The user's frames (innermost first) and the name stack of one operation."""
    traceback: tuple[Frame, ...] | None
    name_stack: NameStack

    def replace(self, *, traceback: Any = None, name_stack: NameStack | None = None
                ) -> "SourceInfo":
        return SourceInfo(self.traceback if traceback is None else traceback,
                          self.name_stack if name_stack is None else name_stack)


def new_source_info() -> SourceInfo:
    return SourceInfo(None, NameStack())


def current() -> SourceInfo:
    """The calling user code's frames and the current name stack."""
    return SourceInfo(user_frames(), name_state.stack)


def current_name_stack() -> NameStack:
    return name_state.stack


def summarize(source_info: SourceInfo, num_frames: int = 1) -> str:
    """`file:line (function)` of the innermost user frames."""
    frames = (source_info.traceback or ())[:num_frames]
    return "\n".join(reversed([str(f) for f in frames])) or "unknown"


@contextlib.contextmanager
def new_name_stack(name: str = "") -> Iterator[NameStack]:
    stack = NameStack((name,) if name else ())
    with set_name_stack(stack):
        yield stack


@contextlib.contextmanager
def reset_name_stack() -> Iterator[None]:
    with set_name_stack(NameStack()):
        yield


@contextlib.contextmanager
def transform_name_stack(name: str) -> Iterator[NameStack]:
    with set_name_stack(name_state.stack.transform(name)):
        yield name_state.stack


@contextlib.contextmanager
def user_context(traceback: Any, *, name_stack: NameStack | None = None) -> Iterator[None]:
    """Run a block as if at `traceback` (pyjax records frames per equation, so only the name
    stack changes here)."""
    with set_name_stack(name_state.stack if name_stack is None else name_stack):
        yield


__all__ = ["NameStack", "SourceInfo", "current", "current_name_stack", "extend_name_stack",
           "new_name_stack", "new_source_info", "register_exclusion", "reset_name_stack",
           "set_name_stack", "summarize", "transform_name_stack", "user_context"]
