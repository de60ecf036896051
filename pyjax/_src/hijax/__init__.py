"""Hijax: user-defined types and primitives (JAX's `jax._src.hijax`); see types.py,
primitive.py, vjp.py, and box.py for JAX's example mutable type."""
from pyjax._src.hijax.types import (  # noqa: F401
    AvalMutableQDD, AvalQDD, EffectTypeSet, HiPspec, HiType, MappingSpec,
    MutableHiType, MutableQuasiDynamicData, QuasiDynamicData, aval_method, aval_property,
    control_flow_allowed_effects, cur_qdd, custom_derivatives_allowed_effects, register_hitype)
from pyjax._src.hijax.primitive import HiPrimitive  # noqa: F401
from pyjax._src.hijax.vjp import (  # noqa: F401
    VJPHiPrimitive, call_hi_primitive_linearized_p, call_hi_primitive_p)
from pyjax._src.hijax.box import (  # noqa: F401
    Box, BoxEffect, BoxTy, BoxTypeState, box_effect, box_get, box_set, new_box)
