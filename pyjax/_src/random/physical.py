"""Key arrays as their key data: how shape operations on `key<impl>[S]` values run.

A key array of shape S is held as a uint32 buffer of shape S + impl.key_shape.  Jaxprs keep
the logical types (JAX's text); what runs is physical, as JAX lowers extended dtypes:
`physicalize` rewrites a jaxpr about to be compiled so that every key-typed value is its key
data and each shape operation on keys acts on the leading (logical) axes of that buffer, the
trailing key axes carried along (broadcast_in_dim, reshape, squeeze, transpose, rev,
concatenate, slice, tile, copy, select_n, dynamic_slice, dynamic_update_slice, gather, scatter, as
JAX's lowering rules for extended dtypes do); random_wrap and random_unwrap become nothing.
Eagerly, such an operation on a concrete key array runs its one-equation jaxpr through the
same compiler (`apply`), as JAX runs an eager operation as a compiled primitive.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from pyjax._src import caches
from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, Var
from pyjax._src.random.keys import KeyTy


def is_key(aval: Any) -> bool:
    return isinstance(getattr(aval, "dtype", None), KeyTy)


def physical_aval(aval: ShapedArray) -> ShapedArray:
    """The type of a key-typed value's key data."""
    return ShapedArray((*aval.shape, *aval.dtype._impl.key_shape), dtypes.uint32)


def _key_shape(eqn: Eqn) -> tuple[int, ...]:
    for v in (*eqn.outvars, *eqn.invars):
        if is_key(v.aval):
            return v.aval.dtype._impl.key_shape
    raise AssertionError("an equation without key-typed values")


def _trailing(start: int, n: int) -> tuple[int, ...]:
    return tuple(range(start, start + n))


# -- rules: (eqn, physical operands, physical results) -> the equations that replace eqn ----

Rule = Callable[[Eqn, list, list], list]


def _with_params(fn: Callable[..., dict]) -> Rule:
    """A rule that changes only the params: fn(eqn, key_shape, **params) -> new params."""
    def rule(eqn: Eqn, ins: list, outs: list) -> list:
        params = fn(eqn, _key_shape(eqn), **eqn.params)
        return [Eqn(eqn.primitive, ins, outs, params, eqn.source_info)]
    return rule


def _broadcast_in_dim(eqn: Eqn, ks: tuple, *, shape: tuple, broadcast_dimensions: tuple,
                      sharding: Any) -> dict:
    return dict(shape=(*shape, *ks), sharding=None, broadcast_dimensions=(
        *broadcast_dimensions, *_trailing(len(shape), len(ks))))


def _reshape(eqn: Eqn, ks: tuple, *, new_sizes: tuple, dimensions: Any, sharding: Any) -> dict:
    if dimensions is not None:
        dimensions = (*dimensions, *_trailing(len(dimensions), len(ks)))
    return dict(new_sizes=(*new_sizes, *ks), dimensions=dimensions, sharding=None)


def _transpose(eqn: Eqn, ks: tuple, *, permutation: tuple) -> dict:
    return dict(permutation=(*permutation, *_trailing(len(permutation), len(ks))))


def _slice(eqn: Eqn, ks: tuple, *, start_indices: tuple, limit_indices: tuple,
           strides: Any) -> dict:
    return dict(start_indices=(*start_indices, *(0,) * len(ks)),
                limit_indices=(*limit_indices, *ks),
                strides=None if strides is None else (*strides, *(1,) * len(ks)))


def _gather(eqn: Eqn, ks: tuple, *, dimension_numbers: Any, slice_sizes: tuple,
            **params: Any) -> dict:
    out_ndim = eqn.outvars[0].aval.ndim
    dnums = dimension_numbers._replace(offset_dims=(
        *dimension_numbers.offset_dims, *_trailing(out_ndim, len(ks))))
    return dict(params, dimension_numbers=dnums, slice_sizes=(*slice_sizes, *ks))


def _scatter(eqn: Eqn, ks: tuple, *, dimension_numbers: Any, **params: Any) -> dict:
    updates_ndim = eqn.invars[2].aval.ndim
    dnums = dimension_numbers._replace(update_window_dims=(
        *dimension_numbers.update_window_dims, *_trailing(updates_ndim, len(ks))))
    return dict(params, dimension_numbers=dnums)


def _tile(eqn: Eqn, ks: tuple, *, reps: tuple) -> dict:
    return dict(reps=(*reps, *(1,) * len(ks)))


def _same(eqn: Eqn, ks: tuple, **params: Any) -> dict:
    return params


def _zero_indices(eqn: Eqn, ins: list, outs: list) -> list:
    """dynamic_slice / dynamic_update_slice: a zero start for each trailing key axis."""
    ks = _key_shape(eqn)
    starts = [a for a in eqn.invars if not is_key(a.aval)]
    dtype = starts[0].aval.dtype if starts else np.dtype(np.int32)
    zeros = [Literal(np.zeros((), dtype), ShapedArray((), dtype, False)) for _ in ks]
    params = dict(eqn.params)
    if "slice_sizes" in params:
        params["slice_sizes"] = (*params["slice_sizes"], *ks)
    return [Eqn(eqn.primitive, [*ins, *zeros], outs, params, eqn.source_info)]


def _select_n(eqn: Eqn, ins: list, outs: list) -> list:
    """select_n: a predicate of the cases' shape broadcast over the key axes."""
    which, *cases = ins
    if not which.aval.shape:
        return [Eqn(eqn.primitive, ins, outs, eqn.params, eqn.source_info)]
    from pyjax._src.primitives.shape import broadcast_in_dim_p
    shape = cases[0].aval.shape
    wide = Var(ShapedArray(shape, which.aval.dtype, False))
    spread = Eqn(broadcast_in_dim_p, [which], [wide], dict(
        shape=shape, broadcast_dimensions=tuple(range(which.aval.ndim)), sharding=None),
        eqn.source_info)
    return [spread, Eqn(eqn.primitive, [wide, *cases], outs, eqn.params, eqn.source_info)]


def _pad(eqn: Eqn, ins: list, outs: list) -> list:
    """JAX lowers a pad of keys to an hlo.pad of the key data with the logical padding
    config, which MLIR refuses: JAX's error, eager and under jit."""
    from pyjax._src.errors import MLIRError
    n = eqn.invars[0].aval.ndim
    raise MLIRError(f'Operation creation failed:\nerror: "pad:"("pad"): edge_padding_low '
                    f"length ({n}) must match operand rank ({n + len(_key_shape(eqn))})")


RULES: dict[str, Rule] = {
    "broadcast_in_dim": _with_params(_broadcast_in_dim),
    "reshape": _with_params(_reshape),
    "transpose": _with_params(_transpose),
    "slice": _with_params(_slice),
    "gather": _with_params(_gather),
    "scatter": _with_params(_scatter),
    "tile": _with_params(_tile),
    **{name: _with_params(_same)
       for name in ("squeeze", "rev", "reorder", "concatenate", "copy")},
    "dynamic_slice": _zero_indices,
    "dynamic_update_slice": _zero_indices,
    "select_n": _select_n,
    "pad": _pad,
}
#: the identity on key data
_ALIASES = frozenset({"random_wrap", "random_unwrap"})


def _has_keys(jaxpr: Jaxpr) -> bool:
    return any(is_key(v.aval) for v in (*jaxpr.constvars, *jaxpr.invars)) or any(
        is_key(v.aval) for e in jaxpr.eqns for v in (*e.invars, *e.outvars))


def physicalize(closed: ClosedJaxpr) -> ClosedJaxpr:
    """`closed` with every key-typed value its key data (see the module docstring).  Bodies
    held in params are left logical: the primitives holding them compile them, and this pass
    runs then."""
    jaxpr = closed.jaxpr
    if not _has_keys(jaxpr):
        return closed
    env: dict = {}

    def sub(a: Any) -> Any:
        if type(a) is Literal or not is_key(a.aval):
            return env.get(a, a) if type(a) is not Literal else a
        v = env.get(a)
        if v is None:
            v = env[a] = (DropVar if isinstance(a, DropVar) else Var)(physical_aval(a.aval))
        return v

    constvars = [sub(v) for v in jaxpr.constvars]
    consts = [c._buf if is_key(getattr(c, "aval", None)) else c for c in closed.consts]
    invars = [sub(v) for v in jaxpr.invars]
    eqns: list[Eqn] = []
    for eqn in jaxpr.eqns:
        ins = [sub(a) for a in eqn.invars]
        name = eqn.primitive.name
        if name in _ALIASES:
            env[eqn.outvars[0]] = ins[0]
            continue
        outs = [sub(v) for v in eqn.outvars]
        keyed = any(is_key(v.aval) for v in (*eqn.invars, *eqn.outvars))
        rule = RULES.get(name) if keyed else None
        if rule is not None:
            eqns += rule(eqn, ins, outs)
        elif ins == eqn.invars and outs == eqn.outvars:
            eqns.append(eqn)
        else:
            eqns.append(Eqn(eqn.primitive, ins, outs, eqn.params, eqn.source_info))
    outvars = [sub(v) for v in jaxpr.outvars]
    return ClosedJaxpr(Jaxpr(constvars, invars, outvars, eqns, jaxpr.debug_info), consts)


# -- eager ------------------------------------------------------------------------------------

#: (primitive, operand avals, params) -> the compiled one-equation program
_programs: dict = {}
caches.register(_programs.clear)


def apply(prim: Any, args: tuple, params: dict, avals: list) -> Any:
    """`prim` on concrete operands some of which are key arrays: its one-equation jaxpr (types
    `avals`), compiled once per signature (physicalize runs in the compiler), on the buffers."""
    from pyjax._src.backend.dispatch import to_buffer, wrap
    key = (prim, tuple(avals), tuple(params.items()))
    try:
        program = _programs.get(key)
    except TypeError:  # an unhashable param: compiled for this call only
        program, key = None, None
    if program is None:
        out = prim.abstract_eval(*avals, **params)
        outs = list(out) if prim.multiple_results else [out]
        invars = [Var(a) for a in avals]
        outvars = [Var(a) for a in outs]
        closed = ClosedJaxpr(Jaxpr([], invars, outvars, [Eqn(prim, invars, outvars, params)]),
                             [])
        from pyjax._src.backend.executor import compile_jaxpr
        program = (compile_jaxpr(closed), outs)
        if key is not None:
            _programs[key] = program
    run, outs = program
    results = [wrap(b, a) for b, a in zip(run([to_buffer(x)[0] for x in args]), outs)]
    return results if prim.multiple_results else results[0]
