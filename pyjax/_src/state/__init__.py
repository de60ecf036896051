"""Mutable array references (`jax.new_ref`, `jax.Ref`): types.py (AbstractRef), ops.py
(primitives and API)."""
from pyjax._src.state.types import AbstractRef, TransformedRef  # noqa: F401
from pyjax._src.state.ops import (  # noqa: F401
    Ref, freeze, new_ref, ref_addupdate, ref_get, ref_set, ref_swap)
from pyjax._src.core.avals import pytype_aval_mappings as _mappings

_mappings[Ref] = lambda r: r._aval
