"""`jax._src.traceback_util`: API boundaries whose exceptions show the user's frames only
(pyjax's own and registered libraries' frames are dropped unless filtering is off)."""
from __future__ import annotations

import functools
import types
from typing import Any, Callable

from pyjax._src.config import config
from pyjax._src.core.source_info import (  # noqa: F401  (re-exported)
    excluded_paths as _exclude_paths, include_filename, register_exclusion)


def include_frame(frame: types.FrameType) -> bool:
    """Whether `frame` is the user's code (not pyjax's or a registered library's)."""
    return include_filename(frame.f_code.co_filename)


def _filtered(tb: types.TracebackType | None) -> types.TracebackType | None:
    """`tb` without the frames of excluded files (the innermost frame is always kept)."""
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    kept = [t for t in frames[:-1] if include_frame(t.tb_frame)]
    kept += frames[-1:]
    rebuilt = None
    for t in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return rebuilt


def api_boundary(fun: Callable | None = None, *, repro_api_name: str | None = None
                 ) -> Callable:
    """Decorate a library entry point: an exception raised inside it propagates with the
    library's internal frames removed from its traceback (config `jax_traceback_filtering`)."""
    if fun is None:
        return functools.partial(api_boundary, repro_api_name=repro_api_name)

    @functools.wraps(fun)
    def boundary(*args: Any, **kwargs: Any) -> Any:
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            if config.traceback_filtering == "off":
                raise
            raise e.with_traceback(_filtered(e.__traceback__)) from e.__cause__
    return boundary
