"""pyjax.core: what JAX 0.10.2's `jax.core` exports (re-exports only; see
pyjax/_src/compat/core.py for the mapping, the deprecated and the removed names)."""
from pyjax._src.compat.core import (  # noqa: F401
    AbstractValue, Atom, ParamDict, ShapedArray, Trace, Tracer, Value, ensure_compile_time_eval,
    eval_context, eval_jaxpr, max_dim, min_dim, module_getattr)

__getattr__ = module_getattr(__name__)
del module_getattr
