"""`jax.fwd_and_bwd`: a function's forward and backward passes as two functions, so the backward
pass can be jitted once and reused.  `fwd(*args)` returns what `jax.vjp` does, except that the
VJP function is a pytree (a `Partial` over the residuals, the linearized program's constants),
so `jit(fwd)` can return it and `jit(bwd)` take it: calls of one jitted `fwd` trace return the
same static part, so `bwd` is traced once."""
from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, dce
from pyjax._src.transforms.ad import Zero, backward_pass, zeros_like_aval
from pyjax._src.transforms.ad_api import check_cotangent, input_cotangents, linearized_call
from pyjax._src.transforms.staging import abstractify
from pyjax._src.tree_util import Partial, tree_flatten, tree_unflatten


class _Backward:
    """The static part of a VJP function: the linear program, without its residuals."""

    def __init__(self, jaxpr: Any, spec: list, in_tree: Any, out_tree: Any, in_mask: list,
                 out_mask: list, in_avals: list, out_avals: list):
        self.jaxpr, self.spec, self.in_tree, self.out_tree = jaxpr, spec, in_tree, out_tree
        self.in_mask, self.out_mask = in_mask, out_mask
        self.in_avals, self.out_avals = in_avals, out_avals

    def __call__(self, args_res: list, opaque: list, ct: Any) -> Any:
        flat_ct, ct_tree = tree_flatten(ct)
        check_cotangent(flat_ct, ct_tree, self.out_tree, self.out_avals)
        residuals = [(args_res if primal else opaque)[i] for primal, i in self.spec]
        linear = ClosedJaxpr(self.jaxpr, residuals)
        cts = backward_pass(linear, [c for c, m in zip(flat_ct, self.out_mask) if m])
        return input_cotangents([zeros_like_aval(c.aval) if type(c) is Zero else c for c in cts],
                                self.in_mask, self.in_avals, self.in_tree)


def _without_aux(linear: ClosedJaxpr, out_mask: list, n: int) -> tuple[ClosedJaxpr, list]:
    """The linear program of the first `n` outputs only (the aux outputs' tangents dropped),
    with the residuals only they need."""
    jaxpr, _ = dce(linear.jaxpr, [True] * sum(out_mask[:n])
                   + [False] * (len(linear.jaxpr.outvars) - sum(out_mask[:n])))
    read = {a for e in jaxpr.eqns for a in e.invars} | set(jaxpr.outvars)
    keep = [v in read for v in jaxpr.constvars]
    jaxpr = Jaxpr([v for v, k in zip(jaxpr.constvars, keep) if k], jaxpr.invars,
                  jaxpr.outvars, jaxpr.eqns, jaxpr.debug_info)
    return (ClosedJaxpr(jaxpr, [c for c, k in zip(linear.consts, keep) if k]),
            list(out_mask[:n]))


def vjp_as_pytree(fun: Callable, primals: Sequence[Any], has_aux: bool) -> tuple:
    """jax.vjp(fun, *primals, has_aux=has_aux), its VJP function a Partial pytree."""
    lin = linearized_call(fun, primals, has_aux)
    flat_p, in_tree, outs, out_tree, aux = lin[:5]
    linear, in_mask, out_mask = lin.linear, lin.in_mask, lin.out_mask
    if has_aux:
        linear, out_mask = _without_aux(linear, out_mask, len(outs))
    # the residuals as JAX orders them: the inputs that are residuals, in input order, then
    # the others; spec says where each constant of the linear program comes from
    position = {id(x): i for i, x in enumerate(flat_p)}
    used = sorted({position[id(r)] for r in linear.consts if id(r) in position})
    slot = {p: k for k, p in enumerate(used)}
    spec, opaque = [], []
    for r in linear.consts:
        if id(r) in position:
            spec.append((True, slot[position[id(r)]]))
        else:
            spec.append((False, len(opaque)))
            opaque.append(r)
    backward = _Backward(linear.jaxpr, spec, in_tree, out_tree, in_mask, out_mask,
                         [abstractify(p) for p in flat_p], [abstractify(o) for o in outs])
    f_vjp = Partial(backward, [flat_p[p] for p in used], opaque)
    primal_out = tree_unflatten(out_tree, outs)
    return (primal_out, f_vjp, aux) if has_aux else (primal_out, f_vjp)


def _ensure_index(argnums: Any) -> Any:
    if isinstance(argnums, (tuple, list)):
        return tuple(operator.index(i) for i in argnums)
    return operator.index(argnums)


def fwd_and_bwd(fun: Callable, argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True) -> tuple[Callable, Callable]:
    """`fwd` and `bwd`, the forward and backward passes of `fun` with respect to the
    positional arguments `argnums`:

    * `fwd(*args)` is `(fun(*args), residuals)` (with `has_aux`, `(out, residuals, aux)`),
      like `jax.vjp` of `fun` in those arguments;
    * `bwd(residuals, cotangent)` their cotangents (one value if `argnums` is an int, else a
      tuple).

    With `jitted` (the default) both are `jax.jit`-ed, so `bwd` compiles once however many
    times `fwd` runs."""
    from pyjax._src.transforms.jit import jit
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    argnums = _ensure_index(argnums)
    nums = (argnums,) if isinstance(argnums, int) else argnums

    def fwd(*args: Any, **kwargs: Any) -> Any:
        n = len(args)
        positions = [i if i >= 0 else i + n for i in nums]
        for i, p in zip(nums, positions):
            if not 0 <= p < n:
                raise ValueError("Positional argument indices, e.g. for `static_argnums`, must "
                                 "have value greater than or equal to -len(args) and less than "
                                 f"len(args), but got value {i} for len(args) == {n}.")

        def partial_fun(*dyn: Any) -> Any:
            full = list(args)
            for p, v in zip(positions, dyn):
                full[p] = v
            return fun(*full, **kwargs)
        return vjp_as_pytree(partial_fun, [args[p] for p in positions], has_aux)

    def bwd(f_vjp: Any, outgrad: Any) -> Any:
        g = f_vjp(outgrad)
        return g[0] if isinstance(argnums, int) else g

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd
