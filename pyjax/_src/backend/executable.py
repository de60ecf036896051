"""Stage 3 of the jit compiler: the executable of an optimised jaxpr.

The fusion plan (fusion.py) is generated as tier 0 Python (tier0.py); tier 1 (tier1/) then
compiles the large clusters to native kernels, in the background unless `jax_compile_sync`,
and swaps each in when it is ready.  The executable is called with a list of input buffers
and returns the list of output buffers.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from pyjax._src import config as config_module
from pyjax._src.backend import fusion, host_memory, tier0, tier1
from pyjax._src.core.jaxpr import ClosedJaxpr


def build(closed: ClosedJaxpr) -> Callable[[Sequence[Any]], list]:
    """The executable of `closed` (already through passes.optimize)."""
    host_memory.keep_freed_buffers()  # (its results are reused buffers, not fresh pages)
    steps = fusion.plan(closed.jaxpr)
    program = tier0.generate(closed, steps)
    kernels = tier1.attach(program, sync=config_module.config.compile_sync)
    run = program.run
    call = lambda buffers: run(*buffers)  # noqa: E731
    call.positional = run  # loops call the generated function directly (no list per step)
    call.source = program.source  # tier 0 source and plan: what Compiled.as_text() starts with
    call.steps = steps
    call.kernels = kernels  # cluster function -> tier 1 Kernel, or why it stays on tier 0

    def native_text() -> str:
        """The tier 1 part of Compiled.as_text(): each kernel's LLVM IR, or why none."""
        tier1.wait()
        parts = []
        for fname, kernel in kernels.items():
            if isinstance(kernel, tier1.Kernel):
                parts.append(f"; {fname}: tier 1\n{kernel.ir}")
            else:
                parts.append(f"; {fname}: tier 0 ({kernel})")
        return "\n".join(parts)

    call.native_text = native_text
    return call
