"""`linear_call`: a call of a function linear in some arguments, with its transpose given.

`linear_call(fun, fun_transpose, residual_args, linear_args)` is `fun(residual_args,
linear_args)`, staged as one equation whose `callee` is fun's jaxpr.  Transposing it binds
`linear_call` again on fun_transpose's jaxpr, with fun as *its* transpose, so transposing
twice gives back the original call.  The transpose is traced only when first needed (a
memoised thunk, as JAX stages it), because it takes fun's output types.  Its jvp is itself
applied to the tangents.  JAX defines no batching rule for it: vmap raises its error.
"""
from __future__ import annotations

from typing import Any, Callable

from pyjax._src.core.jaxpr import ClosedJaxpr
from pyjax._src.core.primitive import Primitive
from pyjax._src.primitives.control_flow.common import avals_of, trace_body
from pyjax._src.transforms import ad
from pyjax._src.tree_util import tree_flatten, tree_unflatten, treedef_tuple

linear_call_p = Primitive("linear_call", multiple_results=True)


def linear_call(fun: Callable, fun_transpose: Callable, residual_args: Any,
                linear_args: Any) -> Any:
    """`fun(residual_args, linear_args)`, transposed (in `linear_args`) by
    `fun_transpose(residual_args, cotangents)`."""
    res, res_tree = tree_flatten(residual_args)
    lin, lin_tree = tree_flatten(linear_args)
    res_avals, lin_avals = avals_of(res), avals_of(lin)
    callee, consts, out_tree = trace_body(
        lambda r, x: fun(r, x), treedef_tuple((res_tree, lin_tree)),
        [*res_avals, *lin_avals], "linear_call fun")

    @_memoize
    def transpose_thunk() -> tuple[ClosedJaxpr, list]:
        body, t_consts, t_out_tree = trace_body(
            lambda r, ct: fun_transpose(r, ct), treedef_tuple((res_tree, out_tree)),
            [*res_avals, *callee.out_avals], "linear_call fun_transpose")
        if t_out_tree != lin_tree:
            raise TypeError("transpose output pytree structure must match that of linear "
                            f"inputs, got output structure {t_out_tree} and input structure "
                            f"{lin_tree}.")
        return body, t_consts

    outs = linear_call_p.bind(*consts, *res, *lin, callee=callee,
                              transpose_thunk=transpose_thunk, num_callee_consts=len(consts),
                              num_res=len(res))
    return tree_unflatten(out_tree, outs)


def _memoize(thunk: Callable[[], Any]) -> Callable[[], Any]:
    """`thunk` run once, its result kept (the transpose is traced on first use only)."""
    kept: list = []

    def memoized() -> Any:
        if not kept:
            kept.append(thunk())
        return kept[0]
    return memoized


def _linear_call_impl(*args: Any, callee: ClosedJaxpr, **_: Any) -> list:
    from pyjax._src.backend.executor import compile_jaxpr
    return compile_jaxpr(callee)(args)


def _linear_call_abstract(*avals: Any, callee: ClosedJaxpr, **_: Any) -> list:
    return callee.out_avals


def _linear_call_jvp(primals: list, tangents: list, *, num_callee_consts: int, num_res: int,
                     **params: Any) -> tuple[list, list]:
    """The call on the primals, then the same call on the tangents of the linear inputs (the
    constants and residuals are not differentiated through)."""
    fixed = num_callee_consts + num_res
    bind = lambda xs: linear_call_p.bind(*primals[:fixed], *xs, num_callee_consts=num_callee_consts,
                                         num_res=num_res, **params)
    outs = bind(primals[fixed:])
    linear = tangents[fixed:]
    if all(type(t) is ad.Zero for t in linear):
        return outs, [ad.Zero.like(o) for o in outs]
    return outs, bind([ad.instantiate(t) for t in linear])


def _linear_call_transpose_rule(cts: list, *args: Any, callee: ClosedJaxpr,
                                transpose_thunk: Callable, num_callee_consts: int,
                                num_res: int) -> list:
    """A linear_call of the transpose on (residuals, cotangents), with `callee` as its own
    transpose; cotangents for the linear inputs, None for the constants and residuals."""
    transpose, t_consts = transpose_thunk()
    res = args[num_callee_consts:num_callee_consts + num_res]
    ct_avals = transpose.in_avals[len(t_consts) + num_res:]
    cts = [ad.zeros_like_aval(a) if type(ct) is ad.Zero else ct for ct, a in zip(cts, ct_avals)]

    def new_transpose_thunk() -> tuple[ClosedJaxpr, list]:
        return callee, list(args[:num_callee_consts])

    cts_in = linear_call_p.bind(*t_consts, *res, *cts, callee=transpose,
                                transpose_thunk=new_transpose_thunk,
                                num_callee_consts=len(t_consts), num_res=num_res)
    return [None] * (num_callee_consts + num_res) + list(cts_in)


linear_call_p.impl = _linear_call_impl
linear_call_p.abstract_eval = _linear_call_abstract
linear_call_p.jvp = _linear_call_jvp
linear_call_p.transpose = _linear_call_transpose_rule
