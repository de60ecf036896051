"""jax.custom_jvp and jax.custom_vjp: user-defined derivative rules.

Under a transformation a custom function binds a call primitive holding its traced body and the
user's rule, so staged programs show `custom_jvp_call[...]` / `custom_vjp_call[...]` and the JVP
trace applies the rule.  A custom_vjp's tangent is `custom_lin`, a linear primitive whose
transpose runs the user's bwd function; eagerly, the function simply runs.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray, mismatch_extra
from pyjax._src.core.jaxpr import ClosedJaxpr, pp_eqn_standard
from pyjax._src.core.primitive import Primitive
from pyjax._src.parallel import propagation
from pyjax._src.core.trace import trace_state
from pyjax._src.transforms import ad
from pyjax._src.transforms.staging import abstractify, trace_to_jaxpr
from pyjax._src.tree_util import tree_flatten, tree_structure, tree_unflatten



class SymbolicZero:
    """A zero tangent given to a custom JVP rule defined with `symbolic_zeros=True` (and
    accepted back from it): its aval's attributes (shape, dtype) read through."""

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __getattr__(self, name: str) -> Any:
        if name == "aval":
            raise AttributeError(name)
        return getattr(self.aval, name)

    def __repr__(self) -> str:
        return "SymbolicZero"

    def instantiate(self) -> Any:
        return ad.zeros_like_aval(self.aval)

    @staticmethod
    def from_primal_value(val: Any) -> "SymbolicZero":
        return SymbolicZero(ad.tangent_aval(abstractify(val)))


class CustomVJPPrimal(NamedTuple):
    """An argument of a custom_vjp fwd rule defined with `symbolic_zeros=True`: its value and
    whether it is perturbed (has a non-zero tangent)."""
    value: Any
    perturbed: bool


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """`tree` with each CustomVJPPrimal replaced by its value."""
    from pyjax._src.tree_util import tree_map
    return tree_map(lambda x: x.value if isinstance(x, CustomVJPPrimal) else x, tree,
                    is_leaf=lambda x: isinstance(x, CustomVJPPrimal))


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """A zero tangent for every leaf of `val` (SymbolicZero or an array of zeros)."""
    from pyjax._src.tree_util import tree_map

    def zero(x: Any) -> Any:
        aval = ad.tangent_aval(abstractify(x))
        return SymbolicZero(aval) if symbolic_zeros else ad.zeros_like_aval(aval)
    return tree_map(zero, val)


def _to_rule_tangent(t: Any, symbolic_zeros: bool) -> Any:
    """A tangent as a custom rule receives it: Zero becomes SymbolicZero or zeros."""
    if type(t) is ad.Zero:
        return SymbolicZero(t.aval) if symbolic_zeros else ad.instantiate(t)
    return t


def _from_rule_tangent(t: Any) -> Any:
    return ad.Zero(t.aval) if type(t) is SymbolicZero else t


def _instantiate_symbolic(t: Any) -> Any:
    return t.instantiate() if type(t) is SymbolicZero else t


def _name_first_pp(eqn: Any, context: Any) -> Any:
    shown = ["name"] + sorted(k for k in eqn.params if k not in ("name", "num_consts"))
    return pp_eqn_standard(eqn, context, shown)


def _call_impl(*args: Any, call_jaxpr: ClosedJaxpr, **_: Any) -> list:
    from pyjax._src.backend.executor import compile_jaxpr
    return compile_jaxpr(call_jaxpr)(args)


def _call_abstract(*avals: Any, call_jaxpr: ClosedJaxpr, **_: Any) -> list:
    return call_jaxpr.out_avals


def _call_primitive(name: str) -> Primitive:
    prim = Primitive(name, multiple_results=True)
    prim.impl = _call_impl
    prim.abstract_eval = _call_abstract
    prim.pp_rule = _name_first_pp
    prim.sharding_rule = propagation.nested_call
    return prim


def _split_nondiff(args: tuple, nondiff_argnums: Sequence[int]) -> tuple[list, list]:
    nondiff = [args[i] for i in nondiff_argnums]
    diff = [a for i, a in enumerate(args) if i not in nondiff_argnums]
    return nondiff, diff


def _merge_nondiff(nondiff: Sequence[Any], diff: Sequence[Any], nondiff_argnums: Sequence[int],
                   total: int) -> list:
    out, nd, d = [], iter(nondiff), iter(diff)
    for i in range(total):
        out.append(next(nd) if i in nondiff_argnums else next(d))
    return out


@functools.lru_cache(maxsize=512)
def _signature(fun: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):  # builtins without a signature
        return None


def resolve_kwargs(kind: str, fun: Callable, args: tuple, kwargs: dict) -> tuple:
    """The call's arguments as one positional tuple, defaults filled in (so rules see every
    argument, as JAX's do); keyword-only arguments cannot be resolved and raise TypeError.
    A functools.partial's signature is opaque, as in JAX."""
    signature = None if isinstance(fun, functools.partial) else _signature(fun)
    try:
        if signature is None:
            positional, unresolved = args, list(kwargs)
        else:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            positional, unresolved = bound.args, [k for k in bound.kwargs if k in kwargs]
        if unresolved:
            raise TypeError("The following keyword arguments could not be resolved to "
                            f"positions: {', '.join(unresolved)}")
    except TypeError as e:
        raise TypeError(f"The input arguments to the {kind}-decorated function {_name(fun)} "
                        "could not be resolved to positional-only arguments. Binding failed "
                        f"with the error:\n{e}") from e
    return positional


def _name(fun: Callable) -> str:
    while isinstance(fun, functools.partial):  # JAX names a partial by what it wraps
        fun = fun.func
    return getattr(fun, "__name__", str(fun))


def _stage(fun: Callable, nondiff_argnums: Sequence[int], args: tuple
           ) -> tuple[list, list, Any, ClosedJaxpr, Any]:
    """Split off the nondiff args and trace fun over the flat rest: (nondiff, flat args,
    their tree, the body's closed jaxpr, its output tree)."""
    nondiff, diff = _split_nondiff(args, nondiff_argnums)

    def body(*d: Any) -> Any:
        return fun(*_merge_nondiff(nondiff, d, nondiff_argnums, len(args)))

    flat, in_tree = tree_flatten(tuple(diff))
    closed, out_tree = _trace_body(body, flat, in_tree)
    return nondiff, flat, in_tree, closed, out_tree


def _trace_body(fun: Callable, flat_args: Sequence[Any], in_tree: Any) -> tuple[ClosedJaxpr, Any]:
    """fun's jaxpr over the flat differentiable arguments, and its output tree."""
    out_trees: list = []

    def flat(*leaves: Any) -> list:
        out_leaves, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, leaves)))
        out_trees.append(out_tree)
        return out_leaves
    closed = trace_to_jaxpr(flat, [abstractify(x) for x in flat_args])
    return closed, out_trees[0]


# ---------------------------------------------------------------------------------------------
# custom_jvp
# ---------------------------------------------------------------------------------------------

custom_jvp_call_p = _call_primitive("custom_jvp_call")


def _custom_jvp_call_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                         call_jaxpr: ClosedJaxpr, jvp: Callable, name: str,
                         symbolic_zeros: bool) -> tuple[list, list]:
    outs, outs_dot = jvp(list(primals), [_to_rule_tangent(t, symbolic_zeros) for t in tangents])
    return list(outs), [_from_rule_tangent(t) for t in outs_dot]


custom_jvp_call_p.jvp = _custom_jvp_call_jvp


def _named_like(fn: Callable, like: Any) -> "_Named":
    """`fn` printed under the name of the rule it batches (as JAX prints batched rules)."""
    fn.__name__ = str(like)
    return _Named(fn)


def _merge_dims(a: Any, b: Any) -> Any:
    return a if a is not None else b


def _custom_jvp_call_batch(axis: Any, vals: Sequence[Any], dims: Sequence[Any], *,
                           call_jaxpr: ClosedJaxpr, jvp: Callable, name: str,
                           symbolic_zeros: bool) -> tuple[list, list]:
    """Bind again with the batched body and a batched jvp rule (JAX's scheme).  The rule's
    outputs (primals and tangents alike) are matched to the batched body's axes; where the body
    leaves an output unbatched the rule's axis is kept, and reported when the rule ran at bind
    time (under a JVP trace), as JAX's merge of the two does."""
    from pyjax._src.transforms import batching
    if batching.own_tracer_consts(call_jaxpr, axis.trace):
        return batching.inline_call(axis, call_jaxpr, vals, dims)
    body, body_dims = batching.batch_jaxpr(call_jaxpr, dims, axis)
    n = len(vals)
    ran: list = []

    def batched_jvp(primals: list, tangents: list) -> tuple[list, list]:
        def flat(*args: Any) -> list:
            outs, outs_dot = jvp(list(args[:n]), list(args[n:]))
            return [*outs, *map(_instantiate_symbolic, outs_dot)]
        tangents = [_instantiate_symbolic(t) for t in tangents]
        outs, out_dims = batching.batch_flat(flat, [*primals, *tangents], [*dims, *dims],
                                             axis.size, axis.name)
        k = len(outs) // 2
        targets = [b if b is not None else _merge_dims(p, t)
                   for b, p, t in zip(body_dims, out_dims[:k], out_dims[k:])]
        ran.append(targets)
        matched = [batching.match_axis(o, d, t, axis.size)
                   for o, d, t in zip(outs, out_dims, targets + targets)]
        return matched[:k], matched[k:]

    outs = custom_jvp_call_p.bind(*vals, call_jaxpr=body, jvp=_named_like(batched_jvp, jvp),
                                  name=name, symbolic_zeros=symbolic_zeros)
    return outs, (ran[-1] if ran else body_dims)


def _register_custom_jvp_batching() -> None:
    from pyjax._src.transforms import batching
    batching.defcall(custom_jvp_call_p, _custom_jvp_call_batch, "call_jaxpr")


_register_custom_jvp_batching()


def forward_attr(self: Any, name: str) -> Any:
    """`def*` methods a custom_jvp/custom_vjp does not have come from the function it wraps
    (so `custom_vjp(custom_vmap(f)).def_vmap` works, as in JAX)."""
    if name.startswith("def"):
        return getattr(self.fun, name)
    raise AttributeError(name)


class custom_jvp:  # noqa: N801 - JAX's name
    """A function with a user-defined JVP: `f.defjvp(rule)` or `f.defjvps(*per_arg_rules)`."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable | None = None
        self.symbolic_zeros = False

    __getattr__ = forward_attr

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """rule(primals, tangents) -> (primal_out, tangent_out) (nondiff args first); with
        `symbolic_zeros`, zero tangents arrive (and may be returned) as SymbolicZero."""
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *rules: Callable | None) -> None:
        """One rule per argument: rule(g, ans, *primals) -> that argument's contribution."""
        def jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
            ans = self(*primals)  # the custom function: an outer derivative applies the rule
            total = None
            for rule, g in zip(rules, tangents):
                if rule is None:
                    continue
                term = rule(g, ans, *primals)
                total = term if total is None else _tree_add(total, term)
            return ans, total
        self.jvp = jvp
        self.symbolic_zeros = False

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function "
                                 f"{getattr(self.fun, '__name__', self.fun)} using defjvp.")
        args = resolve_kwargs("custom_jvp", self.fun, args, kwargs)
        trace = trace_state.trace
        if trace is None or trace.eager_like:  # eager: the function itself
            return self.fun(*args)
        nondiff, flat, in_tree, closed, out_tree = _stage(self.fun, self.nondiff_argnums, args)

        jvp_name = getattr(self.jvp, "__name__", "jvp")
        primal_name = getattr(self.fun, "__name__", "custom_jvp")
        out_avals = closed.out_avals

        def flat_jvp(primals: list, tangents: list) -> tuple[list, list]:
            p_tree = tree_unflatten(in_tree, primals)
            t_tree = tree_unflatten(in_tree, tangents)
            pair = self.jvp(*nondiff, tuple(p_tree), tuple(t_tree))
            return _check_jvp_output(pair, jvp_name, primal_name, out_tree, out_avals)
        flat_jvp.__name__ = jvp_name

        outs = custom_jvp_call_p.bind(*flat, call_jaxpr=closed, jvp=_Named(flat_jvp),
                                      name=getattr(self.fun, "__name__", "custom_jvp"),
                                      symbolic_zeros=self.symbolic_zeros)
        return tree_unflatten(out_tree, outs)


def _check_jvp_output(pair: Any, jvp_name: str, primal_name: str, out_tree: Any,
                      out_avals: Sequence[Any]) -> tuple[list, list]:
    """The flat (primal, tangent) outputs of a custom JVP rule, checked as JAX checks them:
    a pair, of one structure, whose primals match the function's outputs and whose tangents
    have the tangent types of the primals (else JAX's TypeErrors, naming the rule)."""
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        raise TypeError(f"Custom JVP rule {jvp_name} for function {primal_name} must produce a "
                        "pair (list or tuple of length two) representing primal and tangent "
                        f"outputs, but got {pair}.")
    primals_out, tree = tree_flatten(pair[0])
    tangents_out, tree2 = tree_flatten(pair[1])
    if tree != tree2:
        raise TypeError(f"Custom JVP rule {jvp_name} for function {primal_name} must produce "
                        "primal and tangent outputs with equal container (pytree) structures, "
                        f"but got {tree} and {tree2} respectively.")
    avals = [abstractify(x) for x in primals_out]
    shown = tree_unflatten(tree, [a.str_short() for a in avals])
    shown_ = tree_unflatten(out_tree, [a.str_short() for a in out_avals])
    expected_first = (f"Custom JVP rule {jvp_name} for function {primal_name} must produce a "
                      "pair (list or tuple of length two) where the first element represents "
                      "the primal output (equal in value to the output of the "
                      f"custom_jvp-decorated function {primal_name}, and in particular ")
    if tree != out_tree:
        raise TypeError(expected_first + "of the same container/pytree structure), but instead "
                        "the JVP rule output's first element had container/pytree structure:\n"
                        f"    {str(shown).replace(chr(39), '')}\nwhile the custom_jvp-decorated "
                        f"function {primal_name} had output container/pytree structure:\n"
                        f"    {str(shown_).replace(chr(39), '')}.")
    if any(a.shape != b.shape or a.dtype != b.dtype for a, b in zip(avals, out_avals)):
        raise TypeError(expected_first + "with leaves of the same shape/dtype), but instead "
                        "the JVP rule output's first element had shapes/dtypes of:\n"
                        f"    {str(shown).replace(chr(39), '')}\nwhile the custom_jvp-decorated "
                        f"function {primal_name} had output shapes/dtypes of:\n"
                        f"    {str(shown_).replace(chr(39), '')}")
    strong = [ShapedArray(a.shape, a.dtype, False) for a in avals]
    expected = [ad.tangent_aval(a) for a in strong]
    got = [ShapedArray(t.aval.shape, t.aval.dtype, False) if type(t) is SymbolicZero else
           ShapedArray(np.shape(t), dtypes.float0, False)  # float0 zeros are NumPy structs
           if getattr(t, "dtype", None) == dtypes.float0 else
           ShapedArray(abstractify(t).shape, abstractify(t).dtype, False) for t in tangents_out]
    bad = [(p, e, g) for p, e, g in zip(strong, expected, got)
           if e.shape != g.shape or e.dtype != g.dtype]
    if bad:
        if len(expected) == 1:
            (p, e, g), = bad
            raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                            f"corresponding shapes and dtypes. Expected {e.str_short()} "
                            f"(tangent type of {p.str_short()}) but got {g.str_short()}.")
        raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                        "corresponding shapes and dtypes, but got:\n" + "\n".join(
                            f"  primal {p.str_short()} with tangent {g.str_short()}, expecting "
                            f"tangent {e}" for p, e, g in bad))
    return primals_out, tangents_out


def _check_bwd_output(cts_in: Any, in_tree: Any, in_avals: Sequence[Any]) -> list:
    """The flat cotangents a custom VJP bwd rule returned, as JAX accepts them: a list of the
    right length counts as the tuple, None is a zero cotangent for that whole argument, and
    each cotangent must have its input's shape (and dtype, unless both are inexact)."""
    from pyjax._src.core import dtypes
    from pyjax._src.tree_util import keystr, tree_flatten_with_path, treedef_children
    if isinstance(cts_in, list) and len(cts_in) == len(treedef_children(in_tree)):
        cts_in = tuple(cts_in)
    zero = object()
    dummy = tree_unflatten(in_tree, [object()] * in_tree.num_leaves)
    paths = [p for p, _ in tree_flatten_with_path(dummy)[0]]
    flat: list = []

    def collect(ct: Any, d: Any) -> Any:
        n = len(tree_flatten(d)[0])
        flat.extend([zero if ct is None or type(ct) is SymbolicZero else ct] * n)
        return ct

    try:
        if not isinstance(cts_in, tuple):
            raise ValueError
        from pyjax._src.tree_util import tree_map
        tree_map(collect, cts_in, dummy, is_leaf=lambda x: x is None)
    except ValueError:
        raise TypeError("Custom VJP bwd rule must produce an output with the same container "
                        "(pytree) structure as the args tuple of the primal function, and in "
                        "particular must produce a tuple of length equal to the number of "
                        "arguments to the primal function, but got bwd output structure "
                        f"{tree_structure(cts_in)} for primal input structure {in_tree}."
                        ) from None
    out = []
    for path, aval, ct in zip(paths, in_avals, flat):
        want = ad.tangent_aval(aval)
        if ct is zero or want.dtype == dtypes.float0:
            out.append(ad.Zero(want))
            continue
        got = abstractify(ct)
        inexact_pair = got.shape == want.shape and dtypes.is_inexact(want.dtype)
        if (got.shape != want.shape or got.dtype != want.dtype) and not inexact_pair:
            raise ValueError("Custom VJP bwd rule must produce an output with the same type as "
                             f"the args tuple of the primal function, but at output{keystr(path)}"
                             f" the bwd rule produced an output of type {got.str_short()} "
                             f"corresponding to an input of type {aval.str_short()}"
                             f"{mismatch_extra(aval, got)}")
        out.append(ct)
    return out


class _Named:
    """A callable that prints as its function's name (how JAX shows rules in jaxpr params)."""

    def __init__(self, fn: Callable):
        self.fn = fn

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def __str__(self) -> str:
        return self.fn.__name__


def _tree_add(x: Any, y: Any) -> Any:
    from pyjax._src.numpy.ufuncs import add
    from pyjax._src.tree_util import tree_map
    return tree_map(add, x, y)


# ---------------------------------------------------------------------------------------------
# custom_vjp
# ---------------------------------------------------------------------------------------------

custom_vjp_call_p = _call_primitive("custom_vjp_call")
custom_lin_p = Primitive("custom_lin", multiple_results=True)


def _custom_lin_impl(*args: Any, **params: Any) -> Any:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


custom_lin_p.impl = _custom_lin_impl
custom_lin_p.abstract_eval = lambda *avals, num_res, bwd, out_avals, **_: list(out_avals)


def _custom_lin_transpose(cts: Sequence[Any], *args: Any, num_res: int, bwd: Callable,
                          out_avals: Sequence[Any], **_: Any) -> list:
    residuals = args[:num_res]
    cts = [ad.instantiate(c) for c in cts]
    cts_in = bwd(list(residuals), cts)
    return [None] * num_res + list(cts_in)


custom_lin_p.transpose = _custom_lin_transpose
# Evaluating a linearized custom_vjp function fails alike with batched tangents (JAX's rule).
custom_lin_p.batch = lambda vals, dims, **params: _custom_lin_impl()
custom_lin_p.jvp = lambda primals, tangents, **params: _custom_lin_impl()


def _custom_vjp_call_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                         call_jaxpr: ClosedJaxpr, fwd: Callable, bwd: Callable, name: str,
                         symbolic_zeros: bool) -> tuple[list, list]:
    outs, residuals = fwd(list(primals), [type(t) is not ad.Zero for t in tangents])
    out_avals = [ad.tangent_aval(abstractify(o)) for o in outs]
    # integer inputs have float0 tangents, which are not operands: bwd's cotangents for them
    # are dropped (they are zero by definition)
    kept = [i for i, t in enumerate(tangents)
            if not (type(t) is ad.Zero and t.aval.dtype == dtypes.float0)]
    if len(kept) < len(tangents):
        full_bwd = bwd

        def kept_bwd(residuals: list, cts: list) -> list:
            cts_in = full_bwd(residuals, cts)
            return [cts_in[i] for i in kept]
        kept_bwd.__name__ = str(bwd)
        bwd = _Named(kept_bwd)
    outs_dot = custom_lin_p.bind(*residuals, *[ad.instantiate(tangents[i]) for i in kept],
                                 num_res=len(residuals), bwd=bwd, out_avals=tuple(out_avals),
                                 symbolic_zeros=False)
    return list(outs), list(outs_dot)


custom_vjp_call_p.jvp = _custom_vjp_call_jvp


def _custom_vjp_call_batch(axis: Any, vals: Sequence[Any], dims: Sequence[Any], *,
                           call_jaxpr: ClosedJaxpr, fwd: Callable, bwd: Callable, name: str,
                           symbolic_zeros: bool) -> tuple[list, list]:
    """Bind again with the batched body, a batched fwd (outputs matched to the body's axes,
    residuals wherever fwd leaves them) and a batched bwd whose cotangents are matched to the
    inputs' axes: summed over the batch for unbatched inputs (JAX's scheme)."""
    from pyjax._src.transforms import batching
    if batching.own_tracer_consts(call_jaxpr, axis.trace):
        return batching.inline_call(axis, call_jaxpr, vals, dims)
    body, body_dims = batching.batch_jaxpr(call_jaxpr, dims, axis)
    ran: list = []

    def batched_fwd(primals: list, perturbed: list) -> tuple[list, list]:
        counts: list = []

        def flat(*args: Any) -> list:
            outs, res = fwd(list(args), perturbed)
            counts.append(len(outs))
            return [*outs, *res]
        vals_out, dims_out = batching.batch_flat(flat, primals, dims, axis.size, axis.name)
        k = counts[0]
        targets = [b if b is not None else d for b, d in zip(body_dims, dims_out[:k])]
        ran.append((targets, dims_out[k:]))
        outs = [batching.match_axis(o, d, t, axis.size)
                for o, d, t in zip(vals_out[:k], dims_out[:k], targets)]
        return outs, vals_out[k:]

    def batched_bwd(residuals: list, cts: list) -> list:
        targets, res_dims = ran[-1]
        r = len(residuals)
        cts_in, ct_dims = batching.batch_flat(
            lambda *args: bwd(list(args[:r]), list(args[r:])), [*residuals, *cts],
            [*res_dims, *targets], axis.size, axis.name)
        return [batching.match_axis(c, d, dst, axis.size, sum_match=True)
                for c, d, dst in zip(cts_in, ct_dims, dims)]

    outs = custom_vjp_call_p.bind(*vals, call_jaxpr=body, fwd=_named_like(batched_fwd, fwd),
                                  bwd=_named_like(batched_bwd, bwd), name=name,
                                  symbolic_zeros=symbolic_zeros)
    return outs, (ran[-1][0] if ran else body_dims)


def _register_custom_vjp_batching() -> None:
    from pyjax._src.transforms import batching
    batching.defcall(custom_vjp_call_p, _custom_vjp_call_batch, "call_jaxpr")


_register_custom_vjp_batching()


class custom_vjp:  # noqa: N801 - JAX's name
    """A function with a user-defined VJP: `f.defvjp(fwd, bwd)`."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        self.symbolic_zeros = False

    __getattr__ = forward_attr

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False,
               optimize_remat: bool = False) -> None:
        """fwd(*args) -> (out, residuals); bwd(*nondiff, residuals, ct) -> cts per arg.  With
        `symbolic_zeros`, fwd's array arguments arrive as CustomVJPPrimal(value, perturbed)
        and bwd may return SymbolicZero cotangents."""
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = symbolic_zeros

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function "
                                 f"{getattr(self.fun, '__name__', self.fun)} using defvjp.")
        args = resolve_kwargs("custom_vjp", self.fun, args, kwargs)
        trace = trace_state.trace
        if trace is None or trace.eager_like:  # eager: the function itself
            return self.fun(*args)
        nondiff, flat, in_tree, closed, out_tree = _stage(self.fun, self.nondiff_argnums, args)
        res_trees: list = []

        def flat_fwd(primals: list, perturbed: list) -> tuple[list, list]:
            if self.symbolic_zeros:
                primals = [CustomVJPPrimal(p, d) for p, d in zip(primals, perturbed)]
            full = _merge_nondiff(nondiff, tree_unflatten(in_tree, primals),
                                  self.nondiff_argnums, len(args))
            result = self.fwd(*full)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise TypeError("Custom VJP fwd rule must produce a pair (list or tuple of "
                                f"length two) representing primal outputs and residuals, got "
                                f"{type(result).__name__}")
            out, res = result
            res_leaves, res_tree = tree_flatten(res)
            res_trees.append(res_tree)
            return tree_flatten(out)[0], res_leaves

        in_avals = closed.in_avals

        def flat_bwd(residuals: list, cts: list) -> list:
            res = tree_unflatten(res_trees[-1], residuals)
            cts_in = self.bwd(*nondiff, res, tree_unflatten(out_tree, cts))
            return _check_bwd_output(cts_in, in_tree, in_avals)

        flat_fwd.__name__ = getattr(self.fwd, "__name__", "fwd")
        flat_bwd.__name__ = getattr(self.bwd, "__name__", "bwd")
        outs = custom_vjp_call_p.bind(*flat, call_jaxpr=closed, fwd=_Named(flat_fwd),
                                      bwd=_Named(flat_bwd),
                                      name=getattr(self.fun, "__name__", "custom_vjp"),
                                      symbolic_zeros=False)
        return tree_unflatten(out_tree, outs)


# ---------------------------------------------------------------------------------------------
# closure_convert
# ---------------------------------------------------------------------------------------------

def _maybe_perturbed(x: Any) -> bool:
    """Whether `x` could carry a nonzero tangent (JAX's heuristic): concrete values cannot,
    JVP tracers can unless their tangent is a symbolic zero, staged values can unless their
    tangent space is float0 (integers, booleans)."""
    from pyjax._src.core import dtypes
    from pyjax._src.core.trace import Tracer
    from pyjax._src.transforms.batching import BatchTracer
    from pyjax._src.transforms.staging import DynamicJaxprTracer
    if not isinstance(x, Tracer):
        return False
    if isinstance(x, ad.JVPTracer):
        return type(x.tangent) is not ad.Zero or _maybe_perturbed(x.primal)
    if isinstance(x, DynamicJaxprTracer):
        return ad.tangent_aval(x.aval).dtype != dtypes.float0
    if isinstance(x, BatchTracer):
        return _maybe_perturbed(x.val)
    return True


def closure_convert(fun: Callable, *example_args: Any) -> tuple[Callable, list]:
    """`fun` with the traced values it closes over (those a derivative could flow through)
    made explicit trailing arguments: returns (converted_fun, those values), so that
    converted_fun(*args, *values) == fun(*args).  For custom_vjp bwd functions and the like."""
    from pyjax._src.core.jaxpr import eval_jaxpr
    flat_args, in_tree = tree_flatten(example_args)
    closed, out_tree = _trace_body(fun, flat_args, in_tree)
    hoisted = [_maybe_perturbed(c) for c in closed.consts]
    kept_consts = [c for c, h in zip(closed.consts, hoisted) if not h]
    hoisted_consts = [c for c, h in zip(closed.consts, hoisted) if h]

    def converted_fun(*args_and_consts: Any) -> Any:
        num_args = len(args_and_consts) - len(hoisted_consts)
        args, given = args_and_consts[:num_args], iter(args_and_consts[num_args:])
        kept = iter(kept_consts)
        consts = [next(given) if h else next(kept) for h in hoisted]
        flat, tree = tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError("The inputs to the closure produced by closure_convert must have "
                            "the same Pytree structure as the example arguments passed when "
                            f"closure_convert was called. Expected {in_tree}, but got {tree}")
        return tree_unflatten(out_tree, eval_jaxpr(closed.jaxpr, consts, *flat))

    return converted_fun, hoisted_consts


# ---------------------------------------------------------------------------------------------
# custom_gradient
# ---------------------------------------------------------------------------------------------

def custom_gradient(fun: Callable) -> Callable:
    """`fun(*args) -> (value, vjp)` as a function of `args` returning `value`, whose reverse-mode
    derivative is `vjp(ct) -> cotangents of args` (TensorFlow's form of a custom_vjp).  The
    vjp is traced once on the forward pass, so it may close over forward values."""
    @custom_vjp
    def wrapped(*args: Any) -> Any:
        return fun(*args)[0]

    def fwd(*args: Any) -> tuple:
        ans, rule = fun(*args)
        ans_flat, out_tree = tree_flatten(ans)
        in_avals = [ad.tangent_aval(abstractify(a)) for a in ans_flat]
        vjp_trees: list = []

        def flat_rule(*cts: Any) -> list:
            leaves, tree = tree_flatten(rule(tree_unflatten(out_tree, cts)))
            vjp_trees.append(tree)
            return leaves
        vjp = trace_to_jaxpr(flat_rule, in_avals)
        return ans, (vjp.consts, _Static((vjp.jaxpr, vjp_trees[-1], out_tree)))

    def bwd(res: Any, ct: Any) -> Any:
        consts, static = res
        jaxpr, cts_tree, out_tree = static.value
        from pyjax._src.core.jaxpr import eval_jaxpr
        cts_flat, tree = tree_flatten(ct)
        if tree != out_tree:
            raise TypeError(f"{out_tree}\n!=\n{tree}")
        return tree_unflatten(cts_tree, eval_jaxpr(jaxpr, consts, *cts_flat))

    wrapped.defvjp(fwd, bwd)
    functools.update_wrapper(wrapped, fun)
    return wrapped


class _Static:
    """A value carried in the residuals as pytree structure, not as a leaf (the vjp's jaxpr)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


def _register_static() -> None:
    from pyjax._src.tree_util import register_pytree_node
    register_pytree_node(_Static, lambda s: ((), s.value), lambda value, _: _Static(value))


_register_static()
