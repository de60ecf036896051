"""`jax.stages`: the ahead-of-time stages of a jitted function (re-exports)."""
from pyjax._src.stages import (  # noqa: F401
    ArgInfo, Compiled, CompilerOptions, Lowered, Traced, Wrapped)

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]
