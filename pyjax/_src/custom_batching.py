"""jax.custom_batching: functions with a user-defined vmap rule (JAX's
jax/_src/custom_batching.py).

A `custom_vmap` function traces its body and binds `custom_vmap_call`, a call primitive that
holds the body (its closed-over constants made leading operands) and the rule.  Evaluated or
staged, the body runs; batched, the rule runs instead on the batched operands (batch axes
moved to the front) and says which outputs it batched.  Its JVP binds `custom_vmap_call` again
with the body's JVP and a rule that vmaps the JVP of the user's rule over the operands only one
of primal and tangent batches.  There is no reverse mode (wrap it in custom_vjp for that).
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Sequence

from pyjax._src.core.jaxpr import ClosedJaxpr, eval_jaxpr
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.trace import trace_state
from pyjax._src.primitives.control_flow.common import jvp_jaxpr, separate_consts
from pyjax._src.transforms import ad, batching
from pyjax._src.transforms.custom_derivatives import _trace_body, resolve_kwargs
from pyjax._src.tree_util import (
    tree_flatten, tree_map, tree_structure, tree_unflatten, treedef_tuple)


def _fun_name(fun: Callable) -> str:
    while isinstance(fun, functools.partial):
        fun = fun.func
    return getattr(fun, "__name__", str(fun))


class custom_vmap:  # noqa: N801 - JAX's name
    """A function whose behaviour under vmap is `rule`, set with `f.def_vmap(rule)`:
    rule(axis_size, in_batched, *batched_args) -> (outputs, out_batched), where in_batched
    and out_batched are pytrees of booleans shaped like the arguments and outputs and batched
    values carry the batch axis first.  Outside vmap, the function itself runs."""

    fun: Callable[..., Any]
    vmap_rule: Callable[..., tuple[Any, Any]] | None

    def __init__(self, fun: Callable[..., Any]):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None

    def __getattr__(self, name: str) -> Any:
        # a wrapping custom_jvp/custom_vjp forwards its def* methods to the wrapped function
        if name.startswith("def"):
            return getattr(self.fun, name)
        raise AttributeError(name)

    def def_vmap(self, vmap_rule: Callable[..., tuple[Any, Any]]
                 ) -> Callable[..., tuple[Any, Any]]:
        """Set the vmap rule (returned unchanged, so this works as a decorator)."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = resolve_kwargs("custom_vmap", self.fun, args, kwargs)
        if not self.vmap_rule:
            raise AttributeError(f"No batching rule defined for custom_vmap function "
                                 f"{_fun_name(self.fun)} using def_vmap.")
        flat, in_tree = tree_flatten(args)
        closed, out_tree = _trace_body(self.fun, flat, in_tree)
        call, consts = separate_consts(closed)
        outs = custom_vmap_p.bind(*consts, *flat, call=call, rule=ClosedRule(self.vmap_rule),
                                  in_tree=treedef_tuple((tree_structure(list(consts)), in_tree)),
                                  out_tree=out_tree)
        return tree_unflatten(out_tree, outs)


class ClosedRule:
    """The user's rule as the primitive calls it: (axis_size, [consts_batched, in_batched],
    consts, args); the body's constants are never batched.  Prints as the user's rule."""

    def __init__(self, rule: Callable):
        functools.update_wrapper(self, rule)
        self.rule = rule

    def __call__(self, axis_size: int, all_in_batched: Any, *all_args: Any) -> Any:
        _, args = all_args
        consts_batched, in_batched = all_in_batched
        assert not any(tree_flatten(consts_batched)[0]), consts_batched
        return call_rule(self.rule, axis_size, in_batched, args)

    def __str__(self) -> str:
        return str(self.rule)


def call_rule(rule: Callable, axis_size: int, in_batched: Any, args: Any) -> Any:
    return rule(axis_size, in_batched if type(in_batched) is list else list(in_batched), *args)


def _rule_name(rule: Callable) -> str:
    return getattr(rule, "__name__", "<unnamed rule>")


def check_vmap_rule_trees(rule: Callable, original_out_tree: Any, out_tree: Any,
                          out_batched_tree: Any) -> None:
    """The rule's outputs and batching flags have one structure, the function's."""
    if out_tree != out_batched_tree:
        raise ValueError("structure of output value and output batching specification "
                         f"returned by custom vmap rule ({_rule_name(rule)}) do not match.\n"
                         f"Output values: {out_tree}\nBatching spec: {out_batched_tree}")
    if out_tree != original_out_tree:
        raise ValueError(f"structure of output returned by custom vmap rule "
                         f"({_rule_name(rule)}) does not match that of original "
                         f"custom-vmapped function.\nOriginal output: {original_out_tree}\n"
                         f"Rule output: {out_tree}")


def _at_front(x: Any, dim: int | None) -> Any:
    return x if dim is None else batching.move_axis(x, dim, 0)


# ---------------------------------------------------------------------------------------------
# custom_vmap_call
# ---------------------------------------------------------------------------------------------

custom_vmap_p = Primitive("custom_vmap_call", multiple_results=True)


def _impl(*args: Any, call: ClosedJaxpr, **_: Any) -> list:
    return eval_jaxpr(call.jaxpr, call.consts, *args)


def _abstract_eval(*avals: Any, call: ClosedJaxpr, **_: Any) -> list:
    return call.out_avals


def _batch(args_flat: Sequence[Any], dims: Sequence[int | None], *, call: ClosedJaxpr,
           rule: Callable, in_tree: Any, out_tree: Any) -> tuple[list, list]:
    """The rule on the operands with their batch axes in front; batched outputs at axis 0."""
    axis_size, = {x.shape[d] for x, d in zip(args_flat, dims) if d is not None}
    args = tree_unflatten(in_tree, [_at_front(x, d) for x, d in zip(args_flat, dims)])
    in_batched = tree_unflatten(in_tree, [d is not None for d in dims])
    out, out_batched = call_rule(rule, axis_size, in_batched, args)
    flat_outs, tree1 = tree_flatten(out)
    flat_out_batched, tree2 = tree_flatten(out_batched)
    check_vmap_rule_trees(rule, out_tree, tree1, tree2)
    return flat_outs, [0 if b else None for b in flat_out_batched]


def custom_vmap_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, call: ClosedJaxpr,
                    rule: Callable, in_tree: Any, out_tree: Any) -> tuple[list, list]:
    """Bind the body's JVP with a rule that batches the JVP of `rule`: operands batched on
    both sides go to `rule` as batched, those batched on one side only are vmapped over."""
    from pyjax._src.transforms.ad_api import jvp

    def jvp_of_rule_rule(axis_size: int, in_batched: Any, primals: Any, tangents: Any
                         ) -> tuple[tuple, tuple]:
        batched_ps, batched_ts = in_batched
        mutually_batched = tree_map(operator.and_, batched_ps, batched_ts)
        extra_ps = tree_map(lambda p, t: 0 if p and not t else None, batched_ps, batched_ts)
        extra_ts = tree_map(lambda p, t: 0 if t and not p else None, batched_ps, batched_ts)
        out_mutually_batched: list = []
        flat_ps_ts, tree_ps_ts = tree_flatten((primals, tangents))
        flat_extra, _ = tree_flatten((extra_ps, extra_ts), is_leaf=lambda x: x is None)

        def to_jvp(*ps: Any) -> Any:
            out, out_batched = call_rule(rule, axis_size, mutually_batched, ps)
            check_vmap_rule_trees(rule, out_tree, tree_structure(out),
                                  tree_structure(out_batched))
            out_mutually_batched.append(out_batched)
            return out

        out_trees: list = []

        def flat_jvp(*leaves: Any) -> list:
            ps, ts = tree_unflatten(tree_ps_ts, leaves)
            out = jvp(to_jvp, ps, ts)
            flat_out, tree = tree_flatten(out)
            out_trees.append(tree)
            return flat_out

        outs, out_axes = batching.batch_flat(flat_jvp, flat_ps_ts, flat_extra, axis_size)
        outs = [_at_front(o, d) for o, d in zip(outs, out_axes)]
        extra = [d is not None for d in out_axes]
        out_ps, out_ts = tree_unflatten(out_trees[0], outs)
        extra_out_ps, extra_out_ts = tree_unflatten(out_trees[0], extra)
        batched_out_ps = tree_map(operator.or_, out_mutually_batched[0], extra_out_ps)
        batched_out_ts = tree_map(operator.or_, out_mutually_batched[0], extra_out_ts)
        return (out_ps, out_ts), (batched_out_ps, batched_out_ts)

    tangents = [ad.instantiate(t) for t in tangents]
    jvp_call, _ = jvp_jaxpr(call, [True] * len(primals), True)
    outs = custom_vmap_p.bind(*primals, *tangents, call=jvp_call, rule=jvp_of_rule_rule,
                              in_tree=treedef_tuple((in_tree, in_tree)),
                              out_tree=treedef_tuple((out_tree, out_tree)))
    k = len(outs) // 2
    return outs[:k], outs[k:]


def _no_linearize(trace: Any, args: Sequence[Any], params: dict) -> Any:
    """Reverse mode: JAX's linearization leaves the primal outputs of a custom_vmap_call
    unknown once a tangent operand is, and refuses."""
    raise ValueError("Linearization failed to produce known values for all output primals. "
                     "This is typically caused by attempting to differentiate a function uses "
                     "an operation that does not support reverse-mode autodiff.")


custom_vmap_p.impl = _impl
custom_vmap_p.abstract_eval = _abstract_eval
custom_vmap_p.batch = _batch
custom_vmap_p.jvp = custom_vmap_jvp
custom_vmap_p.partial_eval = _no_linearize


# ---------------------------------------------------------------------------------------------
# sequential_vmap
# ---------------------------------------------------------------------------------------------

def _tree_split(mask: Any, tree: Any) -> tuple[Any, Any]:
    return (tree_map(lambda m, x: x if m else None, mask, tree),
            tree_map(lambda m, x: None if m else x, mask, tree))


def _tree_merge(mask: Any, lhs: Any, rhs: Any) -> Any:
    return tree_map(lambda m, x, y: x if m else y, mask, lhs, rhs)


def sequential_vmap(f: Callable) -> custom_vmap:
    """`f` as a custom_vmap whose vmap is a loop (lax.map over the batched arguments, the
    unbatched ones closed over): for functions that cannot batch natively."""
    from pyjax._src.primitives.control_flow.scan import map as lax_map

    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size: int, in_batched: list, *args: Any) -> tuple[Any, Any]:
        del axis_size
        mapped_args, bcast_args = _tree_split(in_batched, list(args))

        def to_map(mapped: Any) -> Any:
            return f(*_tree_merge(in_batched, mapped, bcast_args))

        out = lax_map(to_map, mapped_args)
        return out, tree_map(lambda _: True, out)

    return f
