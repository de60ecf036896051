"""Where the rest of pyjax gets executables: `compile_jaxpr` caches one on the ClosedJaxpr.

The compiler itself is staged in this package: passes.py (rewrites) -> fusion.py (the plan)
-> tier0.py (generated Python over NumPy) -> tier1/ (native kernels) -> executable.py.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from pyjax._src import monitoring
from pyjax._src.backend import compiler
from pyjax._src.core.jaxpr import ClosedJaxpr


def compile_jaxpr(closed: ClosedJaxpr, name: str | None = None
                  ) -> Callable[[Sequence[np.ndarray]], list]:
    """A function from input buffers to output buffers (cached on the ClosedJaxpr).
    `backend_compile_and_load` is looked up at each compile, so tools may wrap it.  The
    compile of a named program (a `jit` of function `name`) is reported to `jax.monitoring`
    listeners as JAX's backend-compile event, `fun_name="jit(name)"`."""
    if closed.executable is None:
        if name is not None and monitoring.active():
            with monitoring.timed(monitoring.BACKEND_COMPILE_EVENT, f"jit({name})"):
                closed.executable = compiler.backend_compile_and_load(
                    compiler.host_backend, closed)
        else:
            closed.executable = compiler.backend_compile_and_load(compiler.host_backend, closed)
    return closed.executable
