"""The user-facing autodiff functions over pytrees: jvp, linearize, vjp, grad, value_and_grad,
jacfwd, jacrev, jacobian, hessian, linear_transpose."""
from __future__ import annotations

import dataclasses
import functools
from types import SimpleNamespace
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray, typematch
from pyjax._src.core.jaxpr import ClosedJaxpr
from pyjax._src.transforms.ad import (
    Zero, backward_pass, instantiate, jvp_flat, linearize_flat, stage_linear_flat, tangent_aval,
    zeros_like_aval)
from pyjax._src.transforms.staging import abstractify
from pyjax._src.tree_util import (
    Partial, register_pytree_node, tree_flatten, tree_map, tree_structure, tree_unflatten)


def _as_arrays(leaves: Sequence[Any]) -> list:
    """Differentiated inputs as arrays (Python scalars become weak Arrays), as JAX does."""
    from pyjax._src.numpy.util import as_operand
    return [as_operand(x) for x in leaves]


def _flat_fun(fun: Callable, in_tree: Any, out_trees: list) -> Callable:
    """fun over flat leaves; records the output tree structure in `out_trees`."""
    def flat(*leaves: Any) -> list:
        out = fun(*tree_unflatten(in_tree, leaves))
        out_leaves, out_tree = tree_flatten(out)
        out_trees.append(out_tree)
        return out_leaves
    return flat


def jvp(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple:
    """(fun(*primals), the directional derivative along `tangents`)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    flat_p, in_tree = tree_flatten(tuple(primals))
    flat_t, t_tree = tree_flatten(tuple(tangents))
    flat_p, flat_t = _as_arrays(flat_p), _as_arrays(flat_t)
    if in_tree != t_tree:
        raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                        f"structure; primals have tree structure {in_tree} whereas tangents "
                        f"have tree structure {t_tree}.")
    for p, t in zip(flat_p, flat_t):
        if np.shape(p) != np.shape(t):
            raise ValueError("jvp called with different primal and tangent shapes;Got primal "
                             f"shape {np.shape(p)} and tangent shape as {np.shape(t)}")
    out_trees: list = []
    aux_record: list = []
    target = _aux_split(fun, aux_record) if has_aux else fun
    outs, outs_dot = jvp_flat(_flat_fun(target, in_tree, out_trees), flat_p, flat_t)
    outs_dot = [instantiate(t) for t in outs_dot]
    if has_aux:
        out_tree, aux_tree, kept = aux_record[-1]
        n = out_tree.num_leaves
        return (tree_unflatten(out_tree, outs[:n]), tree_unflatten(out_tree, outs_dot[:n]),
                _rebuild_aux(aux_tree, kept, outs[n:]))
    return tree_unflatten(out_trees[-1], outs), tree_unflatten(out_trees[-1], outs_dot)


_TRACED = object()  # marks an aux leaf whose value comes back through the traced outputs


def _aux_split(fun: Callable, trees: list) -> Callable:
    """fun returning (out, aux) as one flat output list (out leaves, then the array leaves of
    aux; other aux leaves such as strings are kept aside untouched).  Records
    (out_tree, aux_tree, aux_leaves) in `trees`."""
    from pyjax._src.numpy.util import is_arraylike

    def wrapped(*args: Any) -> Any:
        result = fun(*args)
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError("has_aux=True requires the function to return a pair (out, aux), "
                            f"got {type(result).__name__}")
        out, aux = result
        aux_leaves, aux_tree = tree_flatten(aux)
        traced = [leaf for leaf in aux_leaves if is_arraylike(leaf)]
        kept = [_TRACED if is_arraylike(leaf) else leaf for leaf in aux_leaves]
        trees.append((tree_structure(out), aux_tree, kept))
        return (*tree_flatten(out)[0], *traced)
    return wrapped


def _rebuild_aux(aux_tree: Any, kept: list, traced: Sequence[Any]) -> Any:
    values = iter(traced)
    return tree_unflatten(aux_tree, [next(values) if v is _TRACED else v for v in kept])


class Linearized(NamedTuple):
    """A function linearized at its primals (what vjp and fwd_and_bwd build on)."""
    flat_primals: list
    in_tree: Any
    outs: list  # the primal outputs' leaves (aux leaves split off)
    out_tree: Any
    aux: Any  # the rebuilt aux value (None without has_aux)
    num_aux: int  # how many traced aux outputs follow the outputs in `linear`
    linear: ClosedJaxpr
    in_mask: list
    out_mask: list


def linearized_call(fun: Callable, primals: Sequence[Any], has_aux: bool) -> Linearized:
    """`fun(*primals)` linearized (with `has_aux`, its (out, aux) pair split)."""
    flat_p, in_tree = tree_flatten(tuple(primals))
    flat_p = _as_arrays(flat_p)
    trees: list = []
    if has_aux:
        flat = _flat_fun(_aux_split(fun, trees), in_tree, [])
    else:
        flat = _flat_fun(fun, in_tree, trees)
    outs, linear, in_mask, out_mask = linearize_flat(flat, flat_p)
    aux, num_aux = None, 0
    if has_aux:
        out_tree, aux_tree, kept = trees[-1]
        n = out_tree.num_leaves
        num_aux = len(outs) - n
        outs, aux = outs[:n], _rebuild_aux(aux_tree, kept, outs[n:])
    else:
        out_tree = trees[-1]
    return Linearized(flat_p, in_tree, outs, out_tree, aux, num_aux, linear, in_mask, out_mask)


def check_cotangent(flat_ct: list, ct_tree: Any, out_tree: Any, out_avals: list) -> None:
    """JAX's errors for a cotangent whose tree or shapes differ from the primal output's."""
    if ct_tree != out_tree:
        raise TypeError(f"Tree structure of cotangent input {ct_tree}, does not match "
                        f"structure of primal output {out_tree}.")
    for c, a in zip(flat_ct, out_avals):
        if tuple(np.shape(c)) != a.shape:
            raise ValueError(f"Shape of cotangent input to vjp pullback function "
                             f"{np.shape(c)} must be the same as the shape of corresponding "
                             f"primal input {a.shape}.")


def input_cotangents(cts: Sequence[Any], in_mask: list, in_avals: list, in_tree: Any) -> Any:
    """The inputs' cotangents as their tree: zeros where an input had none."""
    cts = iter(cts)
    return tree_unflatten(in_tree, [next(cts) if m else zeros_like_aval(tangent_aval(a))
                                    for m, a in zip(in_mask, in_avals)])


class _Pullback(NamedTuple):
    """What a VJP knows besides its residuals: the linear jaxpr and the trees and avals of the
    function's inputs and outputs."""
    name: str  # the differentiated function's (for the error on extra arguments)
    linear: Any  # the linear Jaxpr, whose constvars the residuals fill
    lin: Linearized  # (its trees, masks and aux count)
    in_avals: list
    out_avals: list

    def __call__(self, residuals: list, ct: Any) -> Any:
        return input_cotangents(self.cotangents(residuals, ct), self.lin.in_mask,
                                self.in_avals, self.lin.in_tree)

    def cotangents(self, residuals: list, ct: Any, unwanted: Sequence[int] = ()) -> list:
        """The linear jaxpr's input cotangents for output cotangent `ct` (zeros for those
        numbered in `unwanted`, which are not computed)."""
        lin = self.lin
        flat_ct, ct_tree = tree_flatten(ct)
        check_cotangent(flat_ct, ct_tree, lin.out_tree, self.out_avals)
        flat_ct = flat_ct + [None] * lin.num_aux
        cts = backward_pass(ClosedJaxpr(self.linear, residuals),
                            [c for c, m in zip(flat_ct, lin.out_mask) if m], unwanted)
        return [zeros_like_aval(c.aval) if type(c) is Zero else c for c in cts]

    def into(self, residuals: list, wants: list, ct: Any) -> Any:
        """The cotangents for output cotangent `ct` as `VJP.with_refs` asked for them: per
        input leaf its value (GradValue), DidntWant (DontWant: not computed), or GradRef
        (added into the Ref given)."""
        kept = [i for i, m in enumerate(self.lin.in_mask) if m]
        unwanted = [k for k, i in enumerate(kept) if isinstance(wants[i], DontWant)]
        linear = iter(self.cotangents(residuals, ct, unwanted))
        out = []
        for want, m, aval in zip(wants, self.lin.in_mask, self.in_avals):
            value = next(linear) if m else zeros_like_aval(tangent_aval(aval))
            if isinstance(want, DontWant):
                out.append(DidntWant())
            elif isinstance(want, GradValue):
                out.append(value)
            else:  # a Ref: the cotangent accumulates into it
                want.addupdate(value)
                out.append(GradRef())
        return tree_unflatten(self.lin.in_tree, out)


@dataclasses.dataclass(frozen=True, slots=True)
class GradValue:
    """`VJP.with_refs`'s marker for an input whose cotangent is returned."""


@dataclasses.dataclass(frozen=True, slots=True)
class DontWant:
    """`VJP.with_refs`'s marker for an input whose cotangent is not wanted (nor computed)."""


@dataclasses.dataclass(frozen=True, slots=True)
class GradRef:
    """What `with_refs`'s pullback returns for an input whose cotangent went into a Ref (a
    pytree without leaves)."""


@dataclasses.dataclass(frozen=True, slots=True)
class DidntWant:
    """What `with_refs`'s pullback returns for a DontWant input (a pytree without leaves)."""


for _marker in (GradRef, DidntWant):
    register_pytree_node(_marker, lambda _: ((), None), lambda _, __, cls=_marker: cls())

#: `jax.ad`: the markers of VJP.with_refs
markers = SimpleNamespace(DontWant=DontWant, DidntWant=DidntWant, GradRef=GradRef,
                          GradValue=GradValue)


class VJP:
    """The pullback `vjp` returns: called on a cotangent of the output, the inputs'
    cotangents.  As JAX's, a pytree whose leaves are its residuals (the linear jaxpr's
    constants), so it can be passed into and returned from jit, scan or tree_map."""

    __slots__ = ("pullback", "residuals")

    def __init__(self, pullback: _Pullback, residuals: list) -> None:
        self.pullback, self.residuals = pullback, residuals

    def __call__(self, ct: Any, *extra: Any) -> Any:
        if extra:
            raise TypeError(_too_many_cotangents(self.pullback.name, len(extra) + 1))
        return self.pullback(self.residuals, ct)

    def with_refs(self, *maybe_ct_refs: Any) -> Partial:
        """The pullback with each input's cotangent as asked by `maybe_ct_refs` (the inputs'
        tree with a GradValue(), a DontWant() or a Ref per leaf), as JAX's VJP.with_refs."""
        wants, tree = tree_flatten(maybe_ct_refs)
        if tree != self.pullback.lin.in_tree:
            raise Exception  # (JAX's own, bare, exception)
        return Partial(self.pullback.into, self.residuals, wants)


register_pytree_node(VJP, lambda f: (f.residuals, f.pullback),
                     lambda pullback, residuals: VJP(pullback, list(residuals)))


def _too_many_cotangents(name: str, count: int) -> str:
    """JAX's message for a pullback called with the output's values splatted out."""
    return (f"The function returned by `jax.vjp` applied to {name} was called with {count} "
            "arguments,\nbut functions returned by `jax.vjp` must be called with a single "
            "argument\ncorresponding to the single value returned by the function being "
            "differentiated\n(even if that returned value is a tuple or other container).\n\n"
            "For example, if we have:\n\n  def f(x):\n    return (x, x)\n"
            "  _, f_vjp = jax.vjp(f, 1.0)\n\nthe function `f` returns a single tuple as "
            "output, and so we call `f_vjp` with a\nsingle tuple as its argument:\n\n"
            "  x_bar, = f_vjp((2.0, 2.0))\n\nIf we instead call `f_vjp(2.0, 2.0)`, with the "
            "values 'splatted out' as\narguments rather than in a tuple, this error can "
            "arise.")


def _vjp_flat(fun: Callable, primals: Sequence[Any], has_aux: bool) -> tuple:
    lin = linearized_call(fun, primals, has_aux)
    pullback = _Pullback(getattr(fun, "__name__", type(fun).__name__), lin.linear.jaxpr, lin,
                         [abstractify(p) for p in lin.flat_primals],
                         [abstractify(o) for o in lin.outs])
    vjp_fun = VJP(pullback, lin.linear.consts)
    primal_out, aux = tree_unflatten(lin.out_tree, lin.outs), lin.aux
    return (primal_out, vjp_fun, aux) if has_aux else (primal_out, vjp_fun)


def vjp(fun: Callable, *primals: Any, has_aux: bool = False, reduce_axes: Any = ()) -> tuple:
    """(fun(*primals), vjp_fun) where vjp_fun maps an output cotangent to input cotangents."""
    return _vjp_flat(fun, primals, has_aux)


def linearize(fun: Callable, *primals: Any) -> tuple:
    """(fun(*primals), f_jvp) where f_jvp evaluates the linear map tangents -> output tangents."""
    from pyjax._src.core.jaxpr import eval_jaxpr
    flat_p, in_tree = tree_flatten(primals)
    flat_p = _as_arrays(flat_p)
    trees: list = []
    outs, linear, in_mask, out_mask = linearize_flat(_flat_fun(fun, in_tree, trees), flat_p)
    out_tree = trees[-1]

    def f_jvp(*tangents: Any) -> Any:
        flat_t, t_tree = tree_flatten(tangents)
        if t_tree != in_tree:
            raise TypeError(f"expected {in_tree}, got {t_tree}")
        for p, t in zip(flat_p, flat_t):
            _check_tangent(abstractify(p), _tangent_type(t))
        kept = [t for t, m in zip(flat_t, in_mask) if m]
        results = iter(eval_jaxpr(linear.jaxpr, linear.consts, *kept))
        return tree_unflatten(out_tree, [next(results) if m else
                                         zeros_like_aval(tangent_aval(abstractify(o)))
                                         for m, o in zip(out_mask, outs)])

    return tree_unflatten(out_tree, outs), f_jvp


def _tangent_type(t: Any) -> ShapedArray:
    """The type of a tangent value: float0 arrays (an integer input's tangent) included."""
    if getattr(t, "dtype", None) == dtypes.float0:
        return ShapedArray(np.shape(t), dtypes.float0)
    return abstractify(t)


def _check_tangent(primal: ShapedArray, tangent: ShapedArray) -> None:
    """JAX's error for a tangent whose shape or dtype is not the primal's tangent type (weak
    types aside; an integer primal's tangent is float0)."""
    expected = tangent_aval(primal)
    if not typematch(expected, tangent):
        expected = ShapedArray(expected.shape, expected.dtype, primal.weak_type)
        raise ValueError("linearized function called on tangent values inconsistent with the "
                         f"original primal values:\nGot tangent aval {tangent} for primal aval "
                         f"{primal} but expected {expected}.")


def linear_transpose(fun: Callable, *primals: Any, reduce_axes: Any = ()) -> Callable:
    """The transpose of the linear function `fun`, at arguments shaped like `primals`: `fun`
    is staged once with unknown inputs (no primal computed), and each call runs its backward
    pass.  The result is a `Partial` holding the staged constants (a pytree, as JAX's)."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    flat_p, in_tree = tree_flatten(primals)
    trees: list = []
    in_avals = [abstractify(p) for p in flat_p]
    linear = stage_linear_flat(_flat_fun(fun, in_tree, trees), in_avals)
    out_avals, out_tree = linear.out_avals, trees[-1]
    in_dtypes, out_dtypes = [a.dtype for a in in_avals], [a.dtype for a in out_avals]
    every = in_dtypes + out_dtypes
    if not (all(dtypes.is_inexact(d) for d in every) or all(dtypes.is_integer(d) for d in every)):
        raise TypeError("linear_transpose only supports [float or complex] -> [float or "
                        "complex], and integer -> integer functions, but got "
                        f"{_dtype_list(in_dtypes)} -> {_dtype_list(out_dtypes)}.")

    def transposed(consts: list, out_cotangent: Any) -> Any:
        flat_ct, ct_tree = tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise TypeError("cotangent tree does not match function output, expected "
                            f"{out_tree} but got {ct_tree}")
        if not all(_same_type(a, c) for a, c in zip(out_avals, flat_ct)):
            raise TypeError("cotangent type does not match function output, expected "
                            f"{tuple(out_avals)} but got {flat_ct}")
        # (cotangents given as Python scalars come back as arrays)
        cts = backward_pass(ClosedJaxpr(linear.jaxpr, consts), _as_arrays(flat_ct))
        return tree_unflatten(in_tree, [instantiate(c) for c in cts])
    return Partial(transposed, list(linear.consts))


def _dtype_list(ds: Sequence[Any]) -> str:
    return "[" + ", ".join(f"dtype('{dtypes.dtype_name(d)}')" for d in ds) + "]"


def _same_type(aval: Any, x: Any) -> bool:
    """Whether `x` is a value of `aval`'s shape and dtype (weak types aside)."""
    got = abstractify(x)
    return tuple(got.shape) == tuple(aval.shape) and got.dtype == aval.dtype


# ---------------------------------------------------------------------------------------------
# grad and friends
# ---------------------------------------------------------------------------------------------

def _check_input_dtype(name: str, x: Any, holomorphic: bool, allow_int: bool) -> None:
    dtype = abstractify(x).dtype
    if holomorphic:
        if not dtypes.is_complex(dtype):
            raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, "
                            f"but got {dtype.name}.")
    elif not dtypes.is_inexact(dtype) and not allow_int:
        raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype that is a "
                        f"sub-dtype of np.inexact), but got {dtypes.dtype_name(dtype)}. If you "
                        "want to use Boolean- or integer-valued inputs, use vjp or set allow_int "
                        "to True.")


def _check_scalar_output(name: str, out: Any, holomorphic: bool) -> None:
    try:
        aval = abstractify(out)
    except TypeError as e:  # a tuple (forgotten has_aux=True), a string, ...: JAX's words
        raise TypeError("Gradient only defined for scalar-output functions. Output was "
                        f"{out}.") from e
    if aval.shape:
        raise TypeError("Gradient only defined for scalar-output functions. Output had shape: "
                        f"{aval.shape}.")
    _check_output_dtype(name, out, holomorphic)


def _check_output_dtype(name: str, out: Any, holomorphic: bool) -> None:
    """Reverse mode differentiates real outputs (complex ones only when holomorphic)."""
    aval = abstractify(out)
    if holomorphic:
        if not dtypes.is_complex(aval.dtype):
            raise TypeError(f"{name} with holomorphic=True requires outputs with complex dtype, "
                            f"but got {aval.dtype.name}.")
    elif dtypes.is_complex(aval.dtype):
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype "
                        f"of np.floating), but got {aval.dtype.name}. For holomorphic "
                        "differentiation, pass holomorphic=True. For differentiation of "
                        "non-holomorphic functions involving complex outputs, use jax.vjp "
                        "directly.")
    elif not dtypes.is_float(aval.dtype):
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype "
                        f"of np.floating), but got {aval.dtype.name}. For differentiation of "
                        "functions with integer outputs, use jax.vjp directly.")


def _split_argnums(args: tuple, argnums: int | Sequence[int]) -> tuple[list[int], bool]:
    single = isinstance(argnums, int)
    nums = [argnums] if single else list(argnums)
    for i in nums:
        if not -len(args) <= i < len(args):
            raise TypeError(f"differentiating with respect to argnums={argnums} requires at "
                            f"least {max(nums) + 1} positional arguments to be passed by the "
                            f"caller, but got only {len(args)} positional arguments.")
    return [i % len(args) for i in nums], single


def _differentiated(name: str, fun: Callable, args: tuple, kwargs: dict, argnums: Any,
                    holomorphic: bool, allow_int: bool) -> tuple[list[int], bool, Callable]:
    """Check the args[argnums] dtypes; return (positions, whether argnums was a single int,
    fun as a function of just those arguments)."""
    nums, single = _split_argnums(args, argnums)
    for i in nums:
        tree_map(lambda x: _check_input_dtype(name, x, holomorphic, allow_int), args[i])
    return nums, single, _with_args(fun, args, kwargs, nums)


def _with_args(fun: Callable, args: tuple, kwargs: dict, nums: Sequence[int]) -> Callable:
    """fun as a function of args[nums] only, the other arguments fixed."""
    def partial_fun(*diff: Any) -> Any:
        full = list(args)
        for i, d in zip(nums, diff):
            full[i] = d
        return fun(*full, **kwargs)
    return partial_fun


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False,
                   reduce_axes: Any = ()) -> Callable:
    """A function returning (fun(*args), gradient of fun w.r.t. args[argnums])."""
    @functools.wraps(fun)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> Any:
        nums, single, partial_fun = _differentiated("grad", fun, args, kwargs, argnums,
                                                    holomorphic, allow_int)

        result = _vjp_flat(partial_fun, [args[i] for i in nums], has_aux)
        ans, vjp_fun = result[0], result[1]
        _check_scalar_output("grad", ans, holomorphic)
        aval = abstractify(ans)
        grads = vjp_fun(ArrayImpl(np.ones((), aval.dtype), aval.weak_type))  # as lax._one(ans)
        g = grads[0] if single else tuple(grads)
        return ((ans, result[2]), g) if has_aux else (ans, g)

    return value_and_grad_f


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False, reduce_axes: Any = ()) -> Callable:
    """The gradient of scalar-valued `fun` with respect to args[argnums]."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_f


# ---------------------------------------------------------------------------------------------
# Jacobians (one jvp / vjp per basis vector until vmap lands, then they batch)
# ---------------------------------------------------------------------------------------------

def _std_basis(tree: Any) -> Any:
    """The identity over all of `tree`'s n scalars, cut into `tree`'s shape: each leaf gets
    shape (n, *leaf.shape).  jacfwd/jacrev push all n directions through one vmap."""
    from pyjax._src.numpy.lax_numpy import eye
    leaves = tree_flatten(tree)[0]
    n = sum(abstractify(x).size for x in leaves)
    return _unravel(tree, 1, None, eye(n, dtype=dtypes.result_type(*leaves)), always_cast=True)


def _unravel(tree: Any, axis: int, example: Any, arr: Any, always_cast: bool = False) -> Any:
    """`arr`'s `axis` cut into one piece per leaf of `tree`, each piece's cut axis replaced by
    that leaf's shape and cast to the dtype of `example` (None: of the leaf).  The standard
    basis binds its casts even when nothing changes, as JAX's does."""
    from pyjax._src.numpy.lax_numpy import reshape, split
    from pyjax._src.numpy.ufuncs import real
    from pyjax._src.primitives.elementwise import convert_element_type_p
    leaves, treedef = tree_flatten(tree)
    axis %= np.ndim(arr)
    shape = np.shape(arr)
    shapes = [(*shape[:axis], *np.shape(leaf), *shape[axis + 1:]) for leaf in leaves]
    targets = [abstractify(leaf if example is None else example) for leaf in leaves]
    if getattr(arr, "dtype", None) == dtypes.float0:  # derivatives of or by integers: zeros
        return tree_unflatten(treedef, [ArrayImpl(np.zeros(s, t.dtype), t.weak_type)
                                        for s, t in zip(shapes, targets)])
    sizes = [abstractify(x).size for x in leaves]
    parts = split(arr, np.cumsum(sizes[:-1]), axis)
    pieces = []
    for part, part_shape, target in zip(parts, shapes, targets):
        part = reshape(part, part_shape)
        if dtypes.is_complex(abstractify(part).dtype) and not dtypes.is_complex(target.dtype):
            part = real(part)
        part_aval = abstractify(part)
        if always_cast or (part_aval.dtype, part_aval.weak_type) != (target.dtype,
                                                                    target.weak_type):
            part = convert_element_type_p.bind(part, new_dtype=target.dtype,
                                               weak_type=target.weak_type)
        pieces.append(part)
    return tree_unflatten(treedef, pieces)


def _check_jacfwd_input(x: Any, holomorphic: bool) -> None:
    """Forward mode pushes real (or, holomorphic, complex) basis vectors: floats only."""
    dtype = abstractify(x).dtype
    if holomorphic:
        if not dtypes.is_complex(dtype):
            raise TypeError("jacfwd with holomorphic=True requires inputs with complex dtype, "
                            f"but got {dtypes.dtype_name(dtype)}.")
    elif not dtypes.is_float(dtype):
        raise TypeError("jacfwd requires real-valued inputs (input dtype that is a sub-dtype "
                        f"of np.floating), but got {dtypes.dtype_name(dtype)}. For holomorphic "
                        "differentiation, pass holomorphic=True. For differentiation of "
                        "non-holomorphic functions involving complex inputs or integer "
                        "inputs, use jax.jvp directly.")


def _check_jacfwd_output(y: Any, holomorphic: bool) -> None:
    """A holomorphic jacobian needs complex outputs."""
    dtype = abstractify(y).dtype
    if holomorphic and not dtypes.is_complex(dtype):
        raise TypeError("jacfwd with holomorphic=True requires outputs with complex dtype, "
                        f"but got {dtypes.dtype_name(dtype)}.")


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """The Jacobian of `fun` by forward mode: one jvp, vmapped over the input basis."""
    from pyjax._src.transforms.batching import vmap

    @functools.wraps(fun)
    def jac_f(*args: Any, **kwargs: Any) -> Any:
        nums, single = _split_argnums(args, argnums)
        diff_args = tuple(args[i] for i in nums)
        tree_map(lambda x: _check_jacfwd_input(x, holomorphic), diff_args)
        partial_fun = _with_args(fun, args, kwargs, nums)

        def push_forward(basis: Any) -> tuple:
            return jvp(partial_fun, diff_args, basis, has_aux=has_aux)

        out_axes = (None, -1, None) if has_aux else (None, -1)
        y, jac, *aux = vmap(push_forward, out_axes=out_axes)(_std_basis(diff_args))
        tree_map(lambda o: _check_jacfwd_output(o, holomorphic), y)
        example = diff_args[0] if single else diff_args
        jac_tree = tree_map(lambda o, j: _unravel(example, -1, o, j), y, jac)
        return (jac_tree, *aux) if has_aux else jac_tree

    return jac_f


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """The Jacobian of `fun` by reverse mode: one vjp, vmapped over the output basis."""
    from pyjax._src.transforms.batching import vmap
    from pyjax._src.tree_util import tree_transpose

    @functools.wraps(fun)
    def jac_f(*args: Any, **kwargs: Any) -> Any:
        nums, single, partial_fun = _differentiated("jacrev", fun, args, kwargs, argnums,
                                                    holomorphic, allow_int)
        diff_args = [args[i] for i in nums]
        y, pullback, *aux = _vjp_flat(partial_fun, diff_args, has_aux)
        tree_map(lambda o: _check_output_dtype("jacrev", o, holomorphic), y)
        jac = vmap(pullback)(_std_basis(y))
        jac = jac[0] if single else jac
        example = diff_args[0] if single else tuple(diff_args)
        jac_tree = tree_map(lambda x, j: _unravel(y, 0, x, j), example, jac)
        jac_tree = tree_transpose(tree_structure(example), tree_structure(y), jac_tree)
        return (jac_tree, *aux) if has_aux else jac_tree

    return jac_f


jacobian = jacrev


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable:
    """The Hessian: jacfwd of jacrev."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)
