"""`while_loop` and `fori_loop`: the `while` primitive holds a cond jaxpr and a body jaxpr.

Operands are `*cond_consts, *body_consts, *init`.  A batched predicate (from vmap) is a vector:
the loop runs while any lane is true, and only lanes still true take the body's new values
(JAX's semantics).  `fori_loop` with static bounds is a `scan` (so reverse mode works); with
traced bounds it is a `while` over (i, upper, x).  Reverse mode of `while` raises JAX's error.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.backend.executor import compile_jaxpr
from pyjax._src.config import config
from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Var, dce
from pyjax._src.core.primitive import Primitive
from pyjax._src.parallel import propagation
from pyjax._src.core.trace import Tracer, use_trace
from pyjax._src.primitives.control_flow import common
from pyjax._src.primitives.control_flow.batch_util import ANY, batch_body, install_batch_rule
from pyjax._src.primitives.control_flow.scan import _rearrange, scan
from pyjax._src.transforms import ad, batching
from pyjax._src.transforms.staging import abstractify
from pyjax._src.tree_util import tree_flatten, tree_unflatten, treedef_is_leaf

while_p = Primitive("while", multiple_results=True)


def _while_impl(*args: np.ndarray, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
                cond_nconsts: int, body_nconsts: int) -> list:
    cond, body = compile_jaxpr(cond_jaxpr), compile_jaxpr(body_jaxpr)
    cconsts = list(args[:cond_nconsts])
    bconsts = list(args[cond_nconsts:cond_nconsts + body_nconsts])
    carry = list(args[cond_nconsts + body_nconsts:])
    pred = cond([*cconsts, *carry])[0]
    if np.ndim(pred) == 0:
        loop = _loop_code(cond_nconsts, body_nconsts, len(carry))
        carry = loop(cond.positional, body.positional, *args)
        return [np.asarray(c) for c in carry]
    while pred.any():  # a batched predicate: lanes that are done keep their values
        new = body([*bconsts, *carry])
        carry = [np.where(pred.reshape(pred.shape + (1,) * (np.ndim(n) - pred.ndim)), n, c)
                 for n, c in zip(new, carry)]
        pred = cond([*cconsts, *carry])[0]
    return [np.asarray(c) for c in carry]


_loops: dict[tuple, Callable] = {}


def _loop_code(n_cconsts: int, n_bconsts: int, n_carry: int) -> Callable:
    """A generated `loop(cond, body, *cconsts, *bconsts, *init) -> carry` calling the compiled
    cond and body positionally (no lists per iteration)."""
    key = (n_cconsts, n_bconsts, n_carry)
    loop = _loops.get(key)
    if loop is None:
        k = [f"k{i}" for i in range(n_cconsts)]
        b = [f"b{i}" for i in range(n_bconsts)]
        c = [f"c{i}" for i in range(n_carry)]
        unpack = "".join(v + ", " for v in c)
        lines = [f"def loop({', '.join(['cond', 'body'] + k + b + c)}):",
                 f"    while cond({', '.join(k + c)})[0]:",
                 f"        {unpack}= body({', '.join(b + c)})" if c else
                 f"        body({', '.join(b)})",
                 f"    return [{', '.join(c)}]"]
        namespace: dict = {}
        exec("\n".join(lines), namespace)
        loop = _loops[key] = namespace["loop"]
    return loop


def _while_abstract_eval(*avals: ShapedArray, cond_jaxpr: ClosedJaxpr,
                         body_jaxpr: ClosedJaxpr, cond_nconsts: int, body_nconsts: int
                         ) -> list[ShapedArray]:
    return list(body_jaxpr.out_avals)


while_p.impl = _while_impl
while_p.abstract_eval = _while_abstract_eval
def _while_sharding(eqn: Any, ins: list, sizes: dict) -> list:
    return [propagation.typed_spec(a) for a in eqn.params["body_jaxpr"].out_avals]


while_p.sharding_rule = _while_sharding


def _while_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, cond_jaxpr: ClosedJaxpr,
               body_jaxpr: ClosedJaxpr, cond_nconsts: int, body_nconsts: int
               ) -> tuple[list, list]:
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    cconst_nz = nonzeros[:cond_nconsts]
    bconst_nz = nonzeros[cond_nconsts:cond_nconsts + body_nconsts]
    carry_nz = nonzeros[cond_nconsts + body_nconsts:]
    num_carry = len(carry_nz)
    for _ in range(1 + num_carry):
        body_nz = bconst_nz + carry_nz
        body_jvp, nz_out = common.jvp_jaxpr(body_jaxpr, body_nz, carry_nz)
        if nz_out == carry_nz:
            break
        carry_nz = [a or b for a, b in zip(carry_nz, nz_out)]
    nonzeros = cconst_nz + body_nz
    tangents = [ad.instantiate(t) if nz else t for t, nz in zip(tangents, nonzeros)]
    cconst = primals[:cond_nconsts]
    bconst = primals[cond_nconsts:cond_nconsts + body_nconsts]
    init = primals[cond_nconsts + body_nconsts:]
    bconst_dot = [t for t in tangents[cond_nconsts:cond_nconsts + body_nconsts]
                  if type(t) is not ad.Zero]
    init_dot = [t for t in tangents[cond_nconsts + body_nconsts:] if type(t) is not ad.Zero]
    body = _rearrange(body_jvp, [body_nconsts, num_carry], [len(bconst_dot), len(init_dot)],
                      [num_carry], [len(init_dot)])
    cj = cond_jaxpr.jaxpr
    cond_aug = ClosedJaxpr(Jaxpr(cj.constvars, [*cj.invars, *[Var(abstractify(t))
                                                               for t in init_dot]],
                                 cj.outvars, cj.eqns, cj.debug_info), cond_jaxpr.consts)
    out = while_p.bind(*cconst, *bconst, *bconst_dot, *init, *init_dot, cond_jaxpr=cond_aug,
                       cond_nconsts=cond_nconsts, body_jaxpr=body,
                       body_nconsts=len(bconst) + len(bconst_dot))
    carry, carry_dot = out[:num_carry], iter(out[num_carry:])
    return carry, [next(carry_dot) if nz else ad.Zero.like(p) for p, nz in zip(carry, nz_out)]


while_p.jvp = _while_jvp


def _while_partial_eval(pe: Any, args: tuple, params: dict) -> list:
    """Known carries run in a known loop; the whole loop is staged for the unknown ones (which
    reverse mode then cannot transpose, as in JAX)."""
    cond_nconsts, body_nconsts = params["cond_nconsts"], params["body_nconsts"]
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    unknowns = [pe.is_unknown(a) for a in args]
    cconst_uk = unknowns[:cond_nconsts]
    bconst_uk = unknowns[cond_nconsts:cond_nconsts + body_nconsts]
    carry_uk = unknowns[cond_nconsts + body_nconsts:]
    for _ in range(1 + len(carry_uk)):
        known, _, out_uk, _, _ = ad.partial_eval_jaxpr(body_jaxpr, bconst_uk + carry_uk,
                                                           carry_uk)
        if out_uk == carry_uk:
            break
        carry_uk = [a or b for a, b in zip(carry_uk, out_uk)]
    cond_uk = ad.partial_eval_jaxpr(cond_jaxpr, cconst_uk + carry_uk, False)[2][0]
    if cond_uk or all(carry_uk) or not any(carry_uk):
        return pe.staging.process_primitive(while_p, args, params)
    num_known = len(carry_uk) - sum(carry_uk)
    body_known = ClosedJaxpr(Jaxpr(known.jaxpr.constvars, known.jaxpr.invars,
                                   known.jaxpr.outvars[:num_known], known.jaxpr.eqns),
                             known.consts)
    body_known = common.prune_outputs(body_known, [True] * num_known)
    cond_known, _, _, _, _ = ad.partial_eval_jaxpr(cond_jaxpr, cconst_uk + carry_uk, False)
    cond_known = ClosedJaxpr(Jaxpr(cond_known.jaxpr.constvars, cond_known.jaxpr.invars,
                                   cond_known.jaxpr.outvars[:1], cond_known.jaxpr.eqns),
                             cond_known.consts)
    known_args = [a for a, uk in zip(args, cconst_uk + bconst_uk + carry_uk) if not uk]
    with use_trace(pe.parent):
        out_known = while_p.bind(*known_args, cond_jaxpr=cond_known,
                                 cond_nconsts=cond_nconsts - sum(cconst_uk),
                                 body_jaxpr=body_known,
                                 body_nconsts=body_nconsts - sum(bconst_uk))
    staged = pe.staging.process_primitive(while_p, args, params)
    known_it = iter(out_known)
    return [s if uk else next(known_it) for s, uk in zip(staged, carry_uk)]


while_p.partial_eval = _while_partial_eval


def _while_transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list:
    raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or "
                     "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or "
                     "using fori_loop with static start/stop.")


while_p.transpose = _while_transpose


def _while_batch(axis: batching.Axis, vals: Sequence[Any], dims: Sequence[Any], *,
                 cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int,
                 body_nconsts: int) -> tuple[list, list]:
    batched = [d is not None for d in dims]
    cconst_b = batched[:cond_nconsts]
    bconst_b = batched[cond_nconsts:cond_nconsts + body_nconsts]
    carry_b = batched[cond_nconsts + body_nconsts:]
    cconst_dims = list(dims[:cond_nconsts])
    bconst_dims = list(dims[cond_nconsts:cond_nconsts + body_nconsts])
    init_dims = list(dims[cond_nconsts + body_nconsts:])
    for _ in range(1 + len(carry_b)):
        _, out_dims = batch_body(body_jaxpr, axis, [0 if b else None for b in bconst_b + carry_b],
                                 [0 if b else ANY for b in carry_b])
        out_b = [d is not None for d in out_dims]
        if [a or b for a, b in zip(carry_b, out_b)] == carry_b:
            break
        carry_b = [a or b for a, b in zip(carry_b, out_b)]
    _, (pred_dim,) = batch_body(cond_jaxpr, axis,
                                [0 if b else None for b in cconst_b + carry_b])
    if pred_dim is not None:
        carry_dims = [0] * len(carry_b)
        body, _ = batch_body(body_jaxpr, axis, bconst_dims + carry_dims, carry_dims)
        cond, _ = batch_body(cond_jaxpr, axis, cconst_dims + carry_dims, [0])
    else:
        rank = len(cond_jaxpr.out_avals[0].shape)
        carry_dims = [rank if b else None for b in carry_b]
        body, _ = batch_body(body_jaxpr, axis, bconst_dims + carry_dims, carry_dims)
        cond, _ = batch_body(cond_jaxpr, axis, cconst_dims + carry_dims, [None])
    init = vals[cond_nconsts + body_nconsts:]
    new_init = []
    for x, old, new in zip(init, init_dims, carry_dims):
        if old is None and new is not None:
            new_init.append(batching.broadcast_batch(x, axis.size, new))
        elif old is None:
            new_init.append(x)
        else:
            new_init.append(batching.move_axis(x, old, new))
    outs = while_p.bind(*vals[:cond_nconsts + body_nconsts], *new_init, cond_jaxpr=cond,
                        cond_nconsts=cond_nconsts, body_jaxpr=body, body_nconsts=body_nconsts)
    return outs, carry_dims


install_batch_rule(while_p, _while_batch,
                   lambda params: (params["cond_jaxpr"], params["body_jaxpr"]))


# ---------------------------------------------------------------------------------------------
# API
# ---------------------------------------------------------------------------------------------

def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """Repeat `val = body_fun(val)` while `cond_fun(val)`; staged as one `while` equation."""
    if config.disable_jit:
        try:
            val = init_val
            while cond_fun(val):
                val = body_fun(val)
            return val
        except Exception as e:  # noqa: BLE001 - only a concretization error falls through
            from pyjax._src import errors
            if not isinstance(e, errors.ConcretizationTypeError):
                raise
    init_flat, in_tree = tree_flatten((init_val,))
    init_tree = tree_flatten(init_val)[1]

    def create(avals: list) -> tuple:
        cond, cconsts, cond_tree = common.trace_body(cond_fun, in_tree, avals, "while_cond",
                                                     (init_val,))
        body, bconsts, body_tree = common.trace_body(body_fun, in_tree, avals, "while_body",
                                                     (init_val,))
        if not treedef_is_leaf(cond_tree) or len(cond.out_avals) != 1:
            raise TypeError(f"cond_fun must return a boolean scalar, but got pytree "
                            f"{cond_tree}.")
        pred = cond.out_avals[0]
        if pred.shape != () or pred.dtype != dtypes.bool_:
            raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                            f"[ShapedArray({pred.str_short()})].")
        return cond, cconsts, body, bconsts, body_tree

    init_avals = [abstractify(x) for x in init_flat]
    cond, cconsts, body, bconsts, body_tree = create(init_avals)
    if len(body.out_avals) != len(init_avals):
        common.check_carry_type("while_loop body", body_fun, init_tree, init_avals,
                                body_tree, body.out_avals)
    promoted = [common.promote_weak_typed_input(x, a, b)
                for x, a, b in zip(init_flat, init_avals, body.out_avals)]
    init_flat = [x for x, _ in promoted]
    if any(changed for _, changed in promoted):
        init_avals = [abstractify(x) for x in init_flat]
        cond, cconsts, body, bconsts, body_tree = create(init_avals)
    common.check_carry_type("while_loop body", body_fun, init_tree, init_avals, body_tree,
                            body.out_avals)
    # a carry the body passes through unchanged and cond does not read becomes a body const
    body_fwd = common.forwarding(body.jaxpr)
    carry_nofwd = [len(bconsts) + i != f for i, f in enumerate(body_fwd)]
    cond_dce, used = dce(cond.jaxpr, [True])
    keep_cond_carry = [u or nf for u, nf in zip(used[len(cconsts):], carry_nofwd)]
    move_to_const = [not k for k in keep_cond_carry]
    new_bconsts: list = []
    if any(move_to_const):
        cj = cond.jaxpr
        kept = [v for v, m in zip(cj.invars, [False] * len(cconsts) + move_to_const) if not m]
        cond = ClosedJaxpr(Jaxpr(cj.constvars, kept, cj.outvars, cond_dce.eqns, cj.debug_info),
                           cond.consts)
        body = common.prune_outputs(body, [not m for m in move_to_const])
        body = common.move_binders_to_front(body, [False] * len(bconsts) + move_to_const)
        init_flat, new_bconsts = common.partition(move_to_const, init_flat)
        bconsts = [*new_bconsts, *bconsts]
    outs = while_p.bind(*cconsts, *bconsts, *init_flat, cond_jaxpr=cond,
                        cond_nconsts=len(cconsts), body_jaxpr=body, body_nconsts=len(bconsts))
    if any(move_to_const):
        outs = common.merge(move_to_const, outs, new_bconsts)
    return tree_unflatten(body_tree, outs)


def _is_concrete(x: Any) -> bool:
    return not isinstance(x, Tracer) or x.concrete_value() is not None


def _is_weak(x: Any) -> bool:
    return type(x) in (int, bool) or bool(getattr(x, "weak_type", False))


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any, *,
              unroll: int | bool | None = None) -> Any:
    """`for i in range(lower, upper): val = body_fun(i, val)`: a scan when the bounds are
    static (so reverse mode works), a while loop otherwise."""
    from pyjax._src.primitives.elementwise import convert_element_type
    lower_dtype = dtypes.result_type(lower)
    upper_dtype = dtypes.result_type(upper)
    if lower_dtype == upper_dtype:
        dtype = lower_dtype
    else:
        dtype = None
        if dtypes.is_integer(lower_dtype) and not dtypes.is_unsigned(lower_dtype) and \
                dtypes.is_integer(upper_dtype) and not dtypes.is_unsigned(upper_dtype):
            if _is_weak(lower) and not _is_weak(upper):
                dtype = upper_dtype
            elif not _is_weak(lower) and _is_weak(upper):
                dtype = lower_dtype
        if dtype is None:
            raise TypeError("lower and upper arguments to fori_loop must have equal types, "
                            f"got {lower_dtype.name} and {upper_dtype.name}")
    if _is_concrete(lower) and _is_concrete(upper):
        lower_, upper_ = int(lower), int(upper)
        length = max(upper_ - lower_, 0)
        if config.disable_jit and length == 0:
            return init_val

        def scanned(carry: Any, _: Any) -> tuple:
            i, x = carry
            return (i + 1, body_fun(i, x)), None

        (_, result), _ = scan(scanned, (lower_, init_val), None, length=length,
                              unroll=False if unroll is None else unroll)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                         "statically known.")
    if lower_dtype != dtype:
        lower = convert_element_type(lower, dtype)
    if upper_dtype != dtype:
        upper = convert_element_type(upper, dtype)

    def body(carry: Any) -> tuple:
        from pyjax._src.primitives.elementwise import add
        i, up, x = carry
        return add(i, _one_like(i)), up, body_fun(i, x)

    return while_loop(_fori_cond, body, (lower, upper, init_val))[2]


def _one_like(i: Any) -> Any:
    """1 of i's type, as lax._const makes it (weak iff i is weak)."""
    from pyjax._src.core.array import ArrayImpl
    aval = abstractify(i)
    return ArrayImpl(np.ones((), aval.dtype), aval.weak_type)


def _fori_cond(carry: Any) -> Any:
    from pyjax._src.primitives.elementwise import lt
    i, upper, _ = carry
    return lt(i, upper)
