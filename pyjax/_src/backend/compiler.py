"""The compile step: a jaxpr becomes an executable for the host backend.

`compile_jaxpr` (executor.py) looks `backend_compile_and_load` up on this module at every
compile, so tools may wrap it: chex's `restrict_backends` does, through JAX's module name
`jax._src.compiler`, exactly as it does on JAX.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from pyjax._src.parallel.devices import Backend, host_backend  # noqa: F401  (re-exported)


def backend_compile_and_load(backend: Backend, closed: Any, executable_devices: Any = None,
                             options: Any = None, host_callbacks: Sequence[Any] = ()
                             ) -> Callable[[Sequence[Any]], list]:
    """The executable of `closed` on `backend`: passes, fusion plan, tier 0 code, tier 1
    kernels (backend/passes.py, fusion.py, tier0.py, tier1/, executable.py)."""
    from pyjax._src.backend import executable, passes
    return executable.build(passes.optimize(closed))
