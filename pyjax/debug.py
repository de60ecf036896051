"""`jax.debug`: printing, logging, callbacks and breakpoints that work inside transformations,
and sharding inspection (re-exports)."""
from pyjax._src.debugger import breakpoint  # noqa: F401,A004
from pyjax._src.debugging import (  # noqa: F401
    DebugEffect, OrderedDebugEffect, inspect_array_sharding, visualize_array_sharding,
    visualize_sharding)
from pyjax._src.debugging import debug_callback as callback  # noqa: F401
from pyjax._src.debugging import debug_log as log  # noqa: F401
from pyjax._src.debugging import debug_print as print  # noqa: F401,A004

__all__ = ["callback", "print", "log", "DebugEffect", "OrderedDebugEffect",
           "visualize_array_sharding", "inspect_array_sharding", "visualize_sharding",
           "breakpoint"]
