"""`jax._src.core`: the union of what `jax.core` and `jax.extend.core` give, plus the few
internal names libraries read (`get_aval`, `typeof`, `Primitive`)."""
from pyjax._src.compat.core import (  # noqa: F401
    Atom, ParamDict, ShapedArray, Trace, Tracer, Value, concrete_or_error,
    ensure_compile_time_eval, eval_context, eval_jaxpr, is_concrete, max_dim, min_dim,
    valid_jaxtype)
from pyjax._src.compat.extend_core import *  # noqa: F401,F403
from pyjax._src.api import typeof  # noqa: F401
from pyjax._src.transforms.staging import abstractify as get_aval  # noqa: F401
