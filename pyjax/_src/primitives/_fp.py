"""`ignore_fp_errors()`: NumPy's `np.errstate(all="ignore")` for impls, at a third of its cost.

XLA computes through overflow, division by zero and invalid operations silently, so impls run
NumPy with its floating-point warnings off.  `np.errstate` builds its settings on every entry
(~1.4 µs, most of an eager op on small arrays); this sets NumPy's context variable to settings
made once.  Where NumPy's internals differ (another version), it is `np.errstate` itself.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

try:
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
    _IGNORE = _make_extobj(all="ignore")
except (ImportError, AttributeError, TypeError):  # pragma: no cover - other NumPy versions
    _extobj_contextvar = None


class _IgnoreFpErrors:
    """Context manager: NumPy floating-point errors ignored in this thread/context."""

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token = _extobj_contextvar.set(_IGNORE)

    def __exit__(self, *exc: Any) -> None:
        _extobj_contextvar.reset(self._token)


def ignore_fp_errors() -> Any:
    """`with ignore_fp_errors():` — as `with np.errstate(all="ignore"):`."""
    if _extobj_contextvar is None:  # pragma: no cover - other NumPy versions
        return np.errstate(all="ignore")
    return _IgnoreFpErrors()


def quietly(fn: Callable) -> Callable:
    """fn with NumPy's floating-point errors ignored, as under `ignore_fp_errors()` but for the
    price of setting the context variable (specialised impls of eager plans, which call
    `quiet.loud`, fn itself, between their own switches of ERRSTATE)."""
    if _extobj_contextvar is None:  # pragma: no cover - other NumPy versions
        def quiet(*args: Any) -> Any:
            with np.errstate(all="ignore"):
                return fn(*args)
        return quiet
    ignore, restore = ERRSTATE.set, ERRSTATE.reset

    def quiet(*args: Any) -> Any:
        token = ignore(IGNORE_ALL)
        try:
            return fn(*args)
        finally:
            restore(token)
    quiet.loud = fn
    return quiet


#: NumPy's error settings (a context variable; None where NumPy's internals differ) and the
#: value that ignores every error: `token = ERRSTATE.set(IGNORE_ALL)`, `ERRSTATE.reset(token)`
ERRSTATE = _extobj_contextvar
IGNORE_ALL = _IGNORE if _extobj_contextvar is not None else None
