"""Where in the user's code an equation was staged: the innermost frames outside pyjax.

Recorded for every staged equation (a short walk up the stack), so errors about a value can
name the user's line that created it.
"""
from __future__ import annotations

import os
import sys
from typing import NamedTuple

_PYJAX_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_MAX_FRAMES = 5


class Frame(NamedTuple):
    file: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} ({self.function})"


def user_frames() -> tuple[Frame, ...]:
    """Up to five innermost frames of the caller that are not pyjax's own, innermost first."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None and len(frames) < _MAX_FRAMES:
        code = frame.f_code
        if not code.co_filename.startswith(_PYJAX_DIR):
            frames.append(Frame(code.co_filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    return tuple(frames)
