"""`VJPHiPrimitive`: an operation defined by a Python expansion and a VJP (JAX's new-style
hijax primitive).  An instance is bound as one `call_hi_primitive` equation holding it
(`_prim`); evaluation and jit run `expand`.  Differentiation uses `jvp` if the subclass
defines it, else `vjp_fwd`: the output tangent is then a `call_hi_primitive_linearized`
equation over the residuals, whose transpose calls `vjp_bwd_retval`.
"""
from __future__ import annotations

from typing import Any, Hashable

from pyjax._src.core.effects import Effect
from pyjax._src.core.primitive import Primitive
from pyjax._src.transforms.ad import Zero, instantiate, is_undefined, tangent_aval
from pyjax._src.tree_util import tree_flatten, tree_unflatten
from pyjax._src.compat.extend_core import on_buffers


class VJPHiPrimitive:
    """Subclasses set `in_avals`, `out_aval` and `params` in `__init__`, then call
    `super().__init__()`; they define `expand`, and `vjp_fwd` with `vjp_bwd_retval` (or
    `jvp`) for autodiff."""

    in_avals: tuple
    out_aval: Any
    params: dict[str, Hashable]
    effects: frozenset[Effect] = frozenset()

    def __init__(self) -> None:
        for name in ("in_avals", "out_aval", "params"):
            if not hasattr(self, name):
                raise AttributeError(f"subclass __init__ should set `self.{name}`")
        if hasattr(type(self), "vjp_bwd"):  # JAX's accumulator form of the backward rule
            if type(self).vjp_bwd_retval is not VJPHiPrimitive.vjp_bwd_retval:
                raise AttributeError(f"subclass {type(self)} should not override both "
                                     "`vjp_bwd` and `vjp_bwd_retval`")
            raise AttributeError(f"subclass {type(self)}: pyjax differentiates through "
                                 "`vjp_bwd_retval` (returned cotangents), not `vjp_bwd`")
        self.in_avals_flat, self.in_tree = tree_flatten(self.in_avals)
        self.out_avals_flat, self.out_tree = tree_flatten(self.out_aval)
        self.__dict__.update(self.params)
        self.check(*self.in_avals)

    def expand(self, *args: Any) -> Any:
        raise NotImplementedError(f"subclass {type(self)} must implement `expand`")

    def vjp_fwd(self, nzs_in: Any, *args: Any) -> Any:
        raise NotImplementedError(f"for grad support, subclass {type(self)} must "
                                  "implement `vjp_fwd`")

    def vjp_bwd_retval(self, res: Any, outgrad: Any) -> Any:
        raise NotImplementedError(f"for grad support, subclass {type(self)} must "
                                  "implement `vjp_bwd` or `vjp_bwd_retval`")

    def jvp(self, primals: Any, tangents: Any) -> Any:
        raise NotImplementedError(f"for jvp support, subclass {type(self)} must "
                                  "implement `jvp`")

    def check(self, *arg_tys: Any) -> None:
        return None

    def __call__(self, *args: Any) -> Any:
        args_flat = self.in_tree.flatten_up_to(args)
        out = call_hi_primitive_p.bind(*args_flat, _prim=self)
        return tree_unflatten(self.out_tree, out)

    def __repr__(self) -> str:
        return f"{type(self).__name__}[{self.params}]"

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(self.params.items()), self.effects))

    def __eq__(self, other: object) -> bool:
        return (type(self) is type(other) and self.params == other.params  # type: ignore
                and self.effects == other.effects)  # type: ignore[attr-defined]


def _expand_flat(*args_flat: Any, _prim: VJPHiPrimitive) -> list:
    out = _prim.expand(*tree_unflatten(_prim.in_tree, args_flat))
    return _prim.out_tree.flatten_up_to(out)


def _abstract_eval(*avals: Any, _prim: VJPHiPrimitive) -> list:
    return list(_prim.out_avals_flat)


def _jvp(primals: Any, tangents: Any, *, _prim: VJPHiPrimitive) -> Any:
    if type(_prim).jvp is not VJPHiPrimitive.jvp:
        ps = tree_unflatten(_prim.in_tree, primals)
        ts = tree_unflatten(_prim.in_tree, tangents)
        out, out_dot = _prim.jvp(ps, ts)
        return _prim.out_tree.flatten_up_to(out), _prim.out_tree.flatten_up_to(out_dot)
    nzs = [type(t) is not Zero for t in tangents]
    out, res = _prim.vjp_fwd(tree_unflatten(_prim.in_tree, nzs),
                             *tree_unflatten(_prim.in_tree, primals))[:2]
    res_flat, res_tree = tree_flatten(res)
    nz_tangents = [t for t in tangents if type(t) is not Zero]
    out_dot = call_hi_primitive_linearized_p.bind(
        *res_flat, *nz_tangents, _prim=_prim, residuals_tree=res_tree, nz_in_flat=tuple(nzs))
    return _prim.out_tree.flatten_up_to(out), out_dot


def _linearized_abstract_eval(*avals: Any, _prim: VJPHiPrimitive, residuals_tree: Any,
                              nz_in_flat: tuple) -> list:
    return [tangent_aval(a) for a in _prim.out_avals_flat]


def _linearized_transpose(cts: Any, *args: Any, _prim: VJPHiPrimitive, residuals_tree: Any,
                          nz_in_flat: tuple) -> list:
    n_res = residuals_tree.num_leaves
    res = tree_unflatten(residuals_tree, args[:n_res])
    cts = [instantiate(c) for c in (cts if isinstance(cts, (list, tuple)) else [cts])]
    in_cts = _prim.vjp_bwd_retval(res, tree_unflatten(_prim.out_tree, cts))
    if isinstance(in_cts, list):
        in_cts = tuple(in_cts)
    in_cts_flat = _prim.in_tree.flatten_up_to(in_cts)
    nz_cts = [c for c, nz in zip(in_cts_flat, nz_in_flat) if nz]
    assert all(is_undefined(a) for a in args[n_res:])
    return [None] * n_res + nz_cts


def _linearized_impl(*args: Any, **params: Any) -> Any:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


call_hi_primitive_p = Primitive("call_hi_primitive", multiple_results=True)
call_hi_primitive_p.impl = on_buffers(_expand_flat, call_hi_primitive_p)
call_hi_primitive_p.eager = lambda prim, args, params: _expand_flat(*args, **params)
call_hi_primitive_p.abstract_eval = _abstract_eval
call_hi_primitive_p.jvp = _jvp

call_hi_primitive_linearized_p = Primitive("call_hi_primitive_linearized",
                                           multiple_results=True)
call_hi_primitive_linearized_p.impl = _linearized_impl
call_hi_primitive_linearized_p.eager = lambda prim, args, params: _linearized_impl()
call_hi_primitive_linearized_p.abstract_eval = _linearized_abstract_eval
call_hi_primitive_linearized_p.transpose = _linearized_transpose
# evaluating or batching the linearized call fails as applying forward mode does (JAX's rule)
call_hi_primitive_linearized_p.jvp = lambda primals, tangents, **params: _linearized_impl()
call_hi_primitive_linearized_p.batch = lambda vals, dims, **params: _linearized_impl()
