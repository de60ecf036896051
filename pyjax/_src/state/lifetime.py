"""A reference's lifetime: `jax.empty_ref` allocates one without an initial value,
`jax.free_ref` ends one.

    b:Ref{f32[3]} = empty_ref[memory_space=None ty=float32[3]]
    free_ref b

As in JAX, `empty_ref` has no eager rule (it is for staged programs: under `jit` its buffer
starts as zeros, a value the program must not rely on, JAX's being uninitialized), and
`free_ref` does nothing when evaluated; staged, it is effectful, so it is never dropped."""
from __future__ import annotations

from typing import Any

import numpy as np

from pyjax._src.core.avals import ShapedArray
from pyjax._src.state.ops import Ref, _make
from pyjax._src.state.types import AbstractRef


def _empty_ref_abstract_eval(*, ty: ShapedArray, memory_space: Any) -> AbstractRef:
    return AbstractRef(ty, memory_space=memory_space)


def _empty_ref_impl(*, ty: ShapedArray, memory_space: Any) -> Ref:
    return Ref(AbstractRef(ty, memory_space=memory_space), np.zeros(ty.shape, ty.dtype))


def _empty_ref_eager(prim: Any, args: tuple, params: dict) -> Any:
    raise NotImplementedError("Evaluation rule for 'empty_ref' not implemented")


def _free_ref_abstract_eval(ref: Any) -> list:
    return []  # (JAX checks nothing: an array operand is accepted too)


def _free_ref_impl(ref: Any) -> list:
    return []


def _free_ref_eager(prim: Any, args: tuple, params: dict) -> list:
    return []


empty_ref_p = _make("empty_ref", _empty_ref_abstract_eval, _empty_ref_impl)
empty_ref_p.eager = _empty_ref_eager
free_ref_p = _make("free_ref", _free_ref_abstract_eval, _free_ref_impl, multiple_results=True)
free_ref_p.eager = _free_ref_eager


def empty_ref(ty: Any, memory_space: Any = None) -> Any:
    """A new reference of `ty`'s shape and dtype (an array, a ShapeDtypeStruct, an aval) with
    no initial value: write it before reading it."""
    from pyjax._src.transforms.staging import abstractify
    aval = ty if type(ty) is ShapedArray else abstractify(ty)
    aval = ShapedArray(aval.shape, aval.dtype)
    return empty_ref_p.bind(ty=aval, memory_space=memory_space)


def free_ref(ref: Any) -> tuple:
    """Invalidate the reference `ref` (nothing to do when evaluated)."""
    free_ref_p.bind(ref)
    return ()
