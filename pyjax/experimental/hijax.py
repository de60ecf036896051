"""`jax.experimental.hijax`: the extension API for user-defined types and primitives
(re-exports)."""
from pyjax._src.core.avals import AbstractValue, ShapedArray  # noqa: F401
from pyjax._src.hijax import (  # noqa: F401
    AvalMutableQDD, AvalQDD, HiPrimitive, HiPspec, HiType, MutableHiType, VJPHiPrimitive,
    aval_method, aval_property, control_flow_allowed_effects, register_hitype)
from pyjax._src.state.types import AbstractRef, TransformedRef  # noqa: F401
from pyjax._src.transforms.ad import Zero  # noqa: F401
from pyjax._src.transforms.ad import instantiate as instantiate_zeros  # noqa: F401
from pyjax._src.transforms.ad import is_undefined as is_undefined_primal  # noqa: F401
