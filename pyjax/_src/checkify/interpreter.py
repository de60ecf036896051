"""The checkify transformation: trace the function to a jaxpr, then evaluate it equation by
equation with an `Error` threaded through.

Each primitive may have a rule in `error_checks` (`rule(error, enabled_errors, *invals,
**params) -> (error, outs)`): NaN checks on the outputs of the primitives that can make a NaN,
division by zero for `div`, out-of-bounds indices for gather, scatter and the dynamic slices,
and `check` equations turned into error values.  Primitives that hold bodies (jit, checkpoint,
cond, while, scan, custom_jvp/vjp calls) are bound again with checkified bodies that take and
return the error's leaves; loops and branches first learn which errors their bodies can add,
so that the error going in has the same structure as the error coming out.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

import pyjax.numpy as jnp
from pyjax._src import lazy_loader
from pyjax._src import tree_util as jtu
from pyjax._src.checkify.check import check_p
from pyjax._src.checkify.errors import (
    DivisionByZeroError, Error, NaNError, OOBError, Out, assert_func, get_traceback,
    init_error, update_error, user_checks)
from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
from pyjax._src.core.primitive import Primitive, registry
from pyjax._src.primitives.control_flow.common import separate_consts
from pyjax._src.primitives.effects import dce_sink
from pyjax._src.primitives.shape import broadcast_in_dim
from pyjax._src.transforms.staging import DebugInfo, abstractify, trace_to_jaxpr

ErrorCheckRule = Callable[..., tuple]
error_checks: dict[Primitive, ErrorCheckRule] = {}


# ---------------------------------------------------------------------------------------------
# The interpreter
# ---------------------------------------------------------------------------------------------

def checkify_jaxpr_flat(jaxpr: Jaxpr, consts: Sequence[Any], enabled_errors: frozenset,
                        error: Error, *args: Any) -> tuple[Error, list]:
    """Evaluate `jaxpr` under the current trace, threading `error` through every rule."""
    env: dict[Var, Any] = {}

    def read(atom: Any) -> Any:
        return atom.val if type(atom) is Literal else env[atom]

    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        invals = [read(a) for a in eqn.invars]
        rule = error_checks.get(eqn.primitive)
        if rule is None:
            outs = eqn.primitive.bind(*invals, **eqn.params)
        else:
            error, outs = rule(error, enabled_errors, *invals, **eqn.params)
        env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else (outs,)))
    return error, [read(v) for v in jaxpr.outvars]


def checkify_jaxpr(closed: ClosedJaxpr, enabled_errors: frozenset, error: Error, *args: Any
                   ) -> tuple[Error, list]:
    return checkify_jaxpr_flat(closed.jaxpr, closed.consts, enabled_errors, error, *args)


def checkify(f: Callable[..., Out], errors: frozenset = user_checks
             ) -> Callable[..., tuple[Error, Out]]:
    """`f` returning `(error, out)`: its `check`s become an Error value instead of raising,
    with the automatic checks of `errors` (user_checks, nan_checks, div_checks, index_checks
    and their unions) added."""
    def checked_fun(*args: Any, **kwargs: Any) -> tuple[Error, Any]:
        out_tree: list = []

        def closed_f() -> list:
            leaves, tree = jtu.tree_flatten(f(*args, **kwargs))
            out_tree.append(tree)
            return leaves
        closed = trace_to_jaxpr(closed_f, [], DebugInfo("checkify", f, args, kwargs))
        error, outs = checkify_jaxpr(closed, errors, init_error)
        return error, jtu.tree_unflatten(out_tree[0], outs)
    return checked_fun


# ---------------------------------------------------------------------------------------------
# Tracing checkified bodies
# ---------------------------------------------------------------------------------------------

class _Traced:
    """A checkified body: the closed jaxpr, the output tree ((error, outs) or the outs),
    and the error effects its output error carries."""

    def __init__(self, closed: ClosedJaxpr, out_tree: Any, effects: set):
        self.closed, self.out_tree, self.effects = closed, out_tree, effects


def _trace(fun: Callable[..., tuple[Error, list]], err_tree: Any, in_avals: Sequence[Any],
           n_before: int = 0, drop_error: bool = False) -> _Traced:
    """Trace `fun(error, *args)` on avals ordered (args[:n_before], error leaves, rest)."""
    n_err = err_tree.num_leaves
    box: list = []

    def flat(*leaves: Any) -> list:
        error = jtu.tree_unflatten(err_tree, leaves[n_before:n_before + n_err])
        error, outs = fun(error, *leaves[:n_before], *leaves[n_before + n_err:])
        out_leaves, tree = jtu.tree_flatten(outs if drop_error else (error, outs))
        box.append((tree, set(error._pred)))
        return out_leaves
    closed = trace_to_jaxpr(flat, list(in_avals))
    return _Traced(closed, *box[0])


def _jaxpr_fun(closed: ClosedJaxpr, enabled_errors: frozenset) -> Callable:
    return lambda error, *args: checkify_jaxpr(closed, enabled_errors, error, *args)


def _avals(xs: Sequence[Any]) -> list[ShapedArray]:
    return [abstractify(x) for x in xs]


def _merged_error(error: Error, trace_body: Callable[[Error], _Traced]) -> Error:
    """`error` with placeholders for every effect the body adds (found by tracing it once)."""
    return error._add_placeholder_effects(trace_body(error).effects)


def _unflatten_out(traced: _Traced, outs: Sequence[Any]) -> tuple[Error, list]:
    error, out = jtu.tree_unflatten(traced.out_tree, list(outs))
    return error, list(out)


# ---------------------------------------------------------------------------------------------
# Automatic checks: NaNs, division by zero, out-of-bounds indices
# ---------------------------------------------------------------------------------------------

def check_nans(prim: Primitive, error: Error, enabled_errors: frozenset, out: Any) -> Error:
    if NaNError not in enabled_errors:
        return error

    def isnan(x: Any) -> Any:
        if dtypes.issubdtype(x.dtype, dtypes.prng_key):
            return False
        return jnp.any(jnp.isnan(x))
    any_nans = (jnp.any(jnp.array([isnan(x) for x in out])) if prim.multiple_results
                else isnan(out))
    return assert_func(error, any_nans, NaNError(get_traceback(), prim.name))


def nan_error_check(prim: Primitive, error: Error, enabled_errors: frozenset, *invals: Any,
                    **params: Any) -> tuple[Error, Any]:
    out = prim.bind(*invals, **params)
    return check_nans(prim, error, enabled_errors, out), out


#: the primitives whose outputs JAX checks for NaNs (div's rule checks them too)
NAN_PRIMITIVES = (
    "acos", "acosh", "add", "asin", "asinh", "atan2", "atan", "atanh", "bessel_i0e",
    "bessel_i1e", "cbrt", "conv_general_dilated", "cos", "cosh", "cumlogsumexp", "cummax",
    "cummin", "cumprod", "cumsum", "digamma", "dot_general", "erf_inv", "erf", "erfc", "exp",
    "expm1", "fft", "igamma_grad_a", "igamma", "igammac", "integer_pow", "lgamma",
    "custom_linear_solve", "log1p", "log", "logistic", "mul", "pad", "pow", "psum", "reduce",
    "reduce_prod", "reduce_sum", "reduce_window", "reduce_window_sum",
    "regularized_incomplete_beta", "rem", "rng_uniform", "rsqrt", "sin", "sinh", "sqrt", "sub",
    "tan", "tanh")


def div_error_check(error: Error, enabled_errors: frozenset, x: Any, y: Any
                    ) -> tuple[Error, Any]:
    if DivisionByZeroError in enabled_errors:
        error = assert_func(error, jnp.any(jnp.equal(y, 0)), DivisionByZeroError(get_traceback()))
    return nan_error_check(registry["div"], error, enabled_errors, x, y)


def oob_payload(oob_mask: Any, indices: Any, dims_map: Sequence[int], operand_shape: tuple
                ) -> Any:
    """[index, axis, axis size] of the first out-of-bounds index (int32)."""
    flat_idx = jnp.argmin(jnp.logical_not(oob_mask))
    multi_idx = jnp.unravel_index(flat_idx, np.shape(indices))
    oob_axis = jnp.array(list(dims_map))[multi_idx[-1]]
    oob_axis_size = jnp.array(list(operand_shape))[oob_axis]
    oob_index = jnp.ravel(indices)[flat_idx]
    return jnp.array([oob_index, oob_axis, oob_axis_size], dtype=np.int32)


def _oob_error(error: Error, name: str, oob_mask: Any, indices: Any, dims_map: Sequence[int],
               operand_shape: tuple) -> Error:
    payload = oob_payload(oob_mask, indices, dims_map, operand_shape)
    return assert_func(error, jnp.any(oob_mask),
                       OOBError(get_traceback(), name, tuple(operand_shape), payload))


def dynamic_slice_error_check(error: Error, enabled_errors: frozenset, operand: Any,
                              *start_indices: Any, slice_sizes: tuple) -> tuple[Error, Any]:
    out = registry["dynamic_slice"].bind(operand, *start_indices, slice_sizes=slice_sizes)
    if OOBError not in enabled_errors:
        return error, out
    starts = jnp.array(start_indices)
    shape = np.shape(operand)
    dims = np.array(shape, dtype=starts.dtype)
    sizes = np.array(slice_sizes, dtype=starts.dtype)
    mask = (starts < 0) | (starts + sizes > dims)
    return _oob_error(error, "dynamic_slice", mask, starts, range(len(shape)), shape), out


def dynamic_update_slice_error_check(error: Error, enabled_errors: frozenset, operand: Any,
                                     update: Any, *start_indices: Any) -> tuple[Error, Any]:
    out = registry["dynamic_update_slice"].bind(operand, update, *start_indices)
    if OOBError not in enabled_errors:
        return error, out
    starts = jnp.array(start_indices)
    shape = np.shape(operand)
    mask = (starts < 0) | (starts + np.array(np.shape(update)) > np.array(shape))
    return _oob_error(error, "dynamic_update_slice", mask, starts, range(len(shape)),
                      shape), out


def gather_error_check(error: Error, enabled_errors: frozenset, operand: Any,
                       start_indices: Any, **params: Any) -> tuple[Error, Any]:
    out = registry["gather"].bind(operand, start_indices, **params)
    if OOBError not in enabled_errors:
        return error, out
    dnums = params["dimension_numbers"]
    shape = np.shape(operand)
    index_map = np.array(dnums.start_index_map, dtype=int)
    upper = np.array(shape, dtype=int)[index_map] - np.array(params["slice_sizes"],
                                                               dtype=int)[index_map]
    upper = jnp.expand_dims(upper, axis=tuple(range(np.ndim(start_indices) - 1)))
    mask = (start_indices < 0) | (start_indices > upper.astype(start_indices.dtype))
    return _oob_error(error, "gather", mask, start_indices, dnums.start_index_map, shape), out


def _scatter_oob(operand: Any, indices: Any, updates: Any, dnums: Any) -> tuple[Any, Any]:
    shape, idx_shape = np.shape(operand), np.shape(indices)
    slice_sizes, pos = [], 0
    for i in range(len(shape)):
        if i in dnums.inserted_window_dims:
            slice_sizes.append(1)
        else:
            slice_sizes.append(np.shape(updates)[dnums.update_window_dims[pos]])
            pos += 1
    upper = np.array([shape[i] - slice_sizes[i] for i in dnums.scatter_dims_to_operand_dims],
                     np.int64)
    upper = np.minimum(upper, np.iinfo(indices.dtype).max)
    upper = broadcast_in_dim(upper, idx_shape, (len(idx_shape) - 1,))
    mask = jnp.logical_or(jnp.less(indices, 0),
                          jnp.greater(indices, upper.astype(indices.dtype)))
    return mask, shape


def scatter_error_check(prim: Primitive, error: Error, enabled_errors: frozenset, operand: Any,
                        indices: Any, updates: Any, **params: Any) -> tuple[Error, Any]:
    out = prim.bind(operand, indices, updates, **params)
    if OOBError not in enabled_errors:
        return error, out
    mask, shape = _scatter_oob(operand, indices, updates, params["dimension_numbers"])
    error = _oob_error(error, prim.name, mask, indices,
                       params["dimension_numbers"].scatter_dims_to_operand_dims, shape)
    return check_nans(prim, error, enabled_errors, out), out


# ---------------------------------------------------------------------------------------------
# check itself, and primitives holding bodies
# ---------------------------------------------------------------------------------------------

def check_discharge_rule(error: Error, enabled_errors: frozenset, *args: Any, err_tree: Any,
                         debug: bool) -> tuple[Error, list]:
    """A staged check becomes part of the error (checks of disabled kinds are dropped)."""
    new_error = jtu.tree_unflatten(err_tree, args)
    for effect in new_error._pred:
        if effect.error_type in enabled_errors:
            error = update_error(error, new_error._pred[effect], new_error._code[effect], {},
                                 new_error._payload[effect], effect)
    return error._replace(_metadata={**new_error._metadata, **error._metadata}), []


def call_error_check(prim: Primitive, error: Error, enabled_errors: frozenset, *args: Any,
                     jaxpr: ClosedJaxpr, **params: Any) -> tuple[Error, list]:
    """jit and checkpoint: the same call with a body that takes and returns the error."""
    err_vals, err_tree = jtu.tree_flatten(error)
    traced = _trace(_jaxpr_fun(jaxpr, enabled_errors), err_tree, _avals([*err_vals, *args]))
    outs = prim.bind(*err_vals, *args, jaxpr=traced.closed, **params)
    return _unflatten_out(traced, outs)


def cond_error_check(error: Error, enabled_errors: frozenset, index: Any, *ops: Any,
                     branches: tuple, **params: Any) -> tuple[Error, list]:
    op_avals = _avals(ops)

    def trace_all(err: Error) -> list[_Traced]:
        err_vals, err_tree = jtu.tree_flatten(err)
        return [_trace(_jaxpr_fun(b, enabled_errors), err_tree, [*_avals(err_vals), *op_avals])
                for b in branches]
    effects = set().union(*(t.effects for t in trace_all(error)))
    error = error._add_placeholder_effects(effects)
    err_vals, _ = jtu.tree_flatten(error)
    traced = trace_all(error)
    # each branch's constants become leading operands that every branch takes
    split = [separate_consts(t.closed) for t in traced]
    all_consts = [c for _, consts in split for c in consts]
    const_avals = _avals(all_consts)
    new_branches, start = [], 0
    for body, consts in split:
        n = len(consts)
        j = body.jaxpr
        invars = [*[Var(a) for a in const_avals[:start]], *j.invars[:n],
                  *[Var(a) for a in const_avals[start + n:]], *j.invars[n:]]
        new_branches.append(ClosedJaxpr(Jaxpr([], invars, j.outvars, j.eqns, j.debug_info), []))
        start += n
    outs = registry["cond"].bind(index, *all_consts, *err_vals, *ops,
                                 branches=tuple(new_branches), **params)
    out_error, out = _unflatten_out(traced[0], outs)
    metadata = dict(out_error._metadata)
    for t in traced[1:]:
        metadata.update(_unflatten_out(t, outs)[0]._metadata)
    return out_error._replace(_metadata=metadata), out


def _mapped(aval: ShapedArray) -> ShapedArray:
    return ShapedArray(aval.shape[1:], aval.dtype, aval.weak_type)


def scan_error_check(error: Error, enabled_errors: frozenset, *in_flat: Any, jaxpr: ClosedJaxpr,
                     num_consts: int, num_carry: int, **params: Any) -> tuple[Error, list]:
    consts = in_flat[:num_consts]
    carry, xs = in_flat[num_consts:num_consts + num_carry], in_flat[num_consts + num_carry:]
    avals = _avals([*consts, *carry]) + [_mapped(a) for a in _avals(xs)]

    def trace_body(err: Error) -> _Traced:
        err_vals, err_tree = jtu.tree_flatten(err)
        in_avals = [*avals[:num_consts], *_avals(err_vals), *avals[num_consts:]]
        return _trace(_jaxpr_fun(jaxpr, enabled_errors), err_tree, in_avals, n_before=num_consts)
    error = _merged_error(error, trace_body)
    err_vals, _ = jtu.tree_flatten(error)
    traced = trace_body(error)
    body, new_consts = separate_consts(traced.closed)
    outs = registry["scan"].bind(*new_consts, *consts, *err_vals, *carry, *xs, jaxpr=body,
                                 num_consts=len(new_consts) + num_consts,
                                 num_carry=len(err_vals) + num_carry, **params)
    return _unflatten_out(traced, outs)


_BATCHED_WHILE_MESSAGE = (
    "Checkify does not support batched while-loops (checkify-of-vmap-of-while). \nHint: if "
    "possible, move the vmap to the outer level to get vmap-of-checkify-of-while.")


def while_loop_error_check(error: Error, enabled_errors: frozenset, *in_flat: Any,
                           cond_nconsts: int, cond_jaxpr: ClosedJaxpr, body_nconsts: int,
                           body_jaxpr: ClosedJaxpr) -> tuple[Error, list]:
    """The condition is checked on the initial carry here, then inside the body on each new
    carry (so that its checks see every value the loop's condition sees)."""
    if cond_jaxpr.out_avals[0].shape:
        raise ValueError(_BATCHED_WHILE_MESSAGE)
    c_consts, b_consts = in_flat[:cond_nconsts], in_flat[cond_nconsts:cond_nconsts + body_nconsts]
    carry = in_flat[cond_nconsts + body_nconsts:]
    error, _ = checkify_jaxpr(cond_jaxpr, enabled_errors, error, *c_consts, *carry)
    consts_avals = _avals([*c_consts, *b_consts])
    carry_avals = _avals(carry)

    def body_then_cond(err: Error, *args: Any) -> tuple[Error, list]:
        cc, bc, cr = args[:cond_nconsts], args[cond_nconsts:len(consts_avals)], \
            args[len(consts_avals):]
        err, out = checkify_jaxpr(body_jaxpr, enabled_errors, err, *bc, *cr)
        err, pred = checkify_jaxpr(cond_jaxpr, enabled_errors, err, *cc, *out)
        dce_sink(pred)
        return err, out

    def trace_body(err: Error) -> _Traced:
        err_vals, err_tree = jtu.tree_flatten(err)
        return _trace(body_then_cond, err_tree, [*consts_avals, *_avals(err_vals), *carry_avals],
                      n_before=len(consts_avals))
    error = _merged_error(error, trace_body)
    err_vals, err_tree = jtu.tree_flatten(error)
    traced = trace_body(error)
    cond_traced = _trace(_jaxpr_fun(cond_jaxpr, enabled_errors), err_tree,
                         [*consts_avals[:cond_nconsts], *_avals(err_vals), *carry_avals],
                         n_before=cond_nconsts, drop_error=True)
    body, body_consts = separate_consts(traced.closed)
    cond, cond_consts = separate_consts(cond_traced.closed)
    outs = registry["while"].bind(
        *cond_consts, *c_consts, *body_consts, *c_consts, *b_consts, *err_vals, *carry,
        cond_nconsts=len(cond_consts) + cond_nconsts, cond_jaxpr=cond,
        body_nconsts=len(body_consts) + cond_nconsts + body_nconsts, body_jaxpr=body)
    return _unflatten_out(traced, outs)


def _body_with_error(error: Error, enabled_errors: frozenset, call_jaxpr: ClosedJaxpr,
                     args: Sequence[Any]) -> tuple[Error, _Traced]:
    """(the error with the body's effects added, the body checkified for that error): a
    custom-derivative body returns an error of the structure it takes, so that its rules can
    forward the error unchanged."""
    def trace_body(err: Error) -> _Traced:
        err_vals, err_tree = jtu.tree_flatten(err)
        return _trace(_jaxpr_fun(call_jaxpr, enabled_errors), err_tree,
                      _avals([*err_vals, *args]))
    error = _merged_error(error, trace_body)
    return error, trace_body(error)


def custom_jvp_call_rule(error: Error, enabled_errors: frozenset, *args: Any,
                         call_jaxpr: ClosedJaxpr, jvp: Callable, **params: Any
                         ) -> tuple[Error, list]:
    """The body is checked; the JVP rule is not (it forwards the error it is given)."""
    from pyjax._src.transforms.custom_derivatives import _named_like, custom_jvp_call_p
    error, traced = _body_with_error(error, enabled_errors, call_jaxpr, args)
    err_vals, _ = jtu.tree_flatten(error)
    n = len(err_vals)

    def checked_jvp(primals: list, tangents: list) -> tuple[list, list]:
        outs, outs_dot = jvp(list(primals[n:]), list(tangents[n:]))
        return [*primals[:n], *outs], [*tangents[:n], *outs_dot]
    outs = custom_jvp_call_p.bind(*err_vals, *args, call_jaxpr=traced.closed,
                                  jvp=_named_like(checked_jvp, jvp), **params)
    return _unflatten_out(traced, outs)


def custom_vjp_call_rule(error: Error, enabled_errors: frozenset, *args: Any,
                         call_jaxpr: ClosedJaxpr, fwd: Callable, bwd: Callable, **params: Any
                         ) -> tuple[Error, list]:
    """The body is checked; fwd and bwd are not (the error passes through unchanged)."""
    from pyjax._src.transforms.custom_derivatives import _named_like, custom_vjp_call_p
    error, traced = _body_with_error(error, enabled_errors, call_jaxpr, args)
    err_vals, _ = jtu.tree_flatten(error)
    n = len(err_vals)

    def checked_fwd(primals: list, *per_primal: list) -> tuple[list, list]:
        outs, residuals = fwd(list(primals[n:]), *[list(p[n:]) for p in per_primal])
        return [*primals[:n], *outs], residuals

    def checked_bwd(residuals: list, cts: list) -> list:
        return [None] * n + list(bwd(residuals, list(cts[n:])))
    outs = custom_vjp_call_p.bind(*err_vals, *args, call_jaxpr=traced.closed,
                                  fwd=_named_like(checked_fwd, fwd),
                                  bwd=_named_like(checked_bwd, bwd), **params)
    return _unflatten_out(traced, outs)


def _register() -> None:
    lazy_loader.load_deferred()  # the rules are keyed on primitives of every family
    for name in NAN_PRIMITIVES:
        if name in registry:
            error_checks[registry[name]] = functools.partial(nan_error_check, registry[name])
    error_checks[registry["div"]] = div_error_check
    error_checks[registry["dynamic_slice"]] = dynamic_slice_error_check
    error_checks[registry["dynamic_update_slice"]] = dynamic_update_slice_error_check
    error_checks[registry["gather"]] = gather_error_check
    for name in ("scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max"):
        error_checks[registry[name]] = functools.partial(scatter_error_check, registry[name])
    error_checks[check_p] = check_discharge_rule
    for name in ("jit", "remat2"):
        error_checks[registry[name]] = functools.partial(call_error_check, registry[name])
    error_checks[registry["cond"]] = cond_error_check
    error_checks[registry["scan"]] = scan_error_check
    error_checks[registry["while"]] = while_loop_error_check
    error_checks[registry["custom_jvp_call"]] = custom_jvp_call_rule
    error_checks[registry["custom_vjp_call"]] = custom_vjp_call_rule


_register()
