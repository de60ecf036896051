"""`custom_linear_solve` and `custom_root`: solves whose derivatives come from the implicit
function theorem rather than from differentiating the solver.

The `custom_linear_solve` primitive holds four closed jaxprs (matvec, vecmat, solve,
transpose_solve; vecmat/transpose_solve may be None) in a `_LinearSolveTuple`, and its operands
are each jaxpr's constants (counted by `const_lengths`, another `_LinearSolveTuple`) then b.
Its rules are JAX's: jvp solves again for `b_dot - (dA) x`, transpose solves the transposed
system (swapping the roles of the four jaxprs), batching finds by fixpoint which parts of x and b
are batched so that all four jaxprs agree.  Partial evaluation is the generic one (the whole
solve is staged when any operand is unknown).  `custom_root` is a `custom_jvp` function
(`_custom_root`) whose rule differentiates the root through `f` linearized at the solution.
"""
from __future__ import annotations

import weakref
from functools import partial
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from pyjax._src import caches
from pyjax._src.backend.executor import compile_jaxpr
from pyjax._src.config import config
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr
from pyjax._src.core.primitive import Primitive
from pyjax._src.primitives.control_flow import common
from pyjax._src.primitives.control_flow.batch_util import ANY, batch_body, install_batch_rule
from pyjax._src.transforms import ad, batching
from pyjax._src.transforms.custom_derivatives import custom_jvp
from pyjax._src.transforms.staging import abstractify
from pyjax._src.tree_util import tree_flatten, tree_leaves, tree_unflatten


class _LinearSolveTuple(NamedTuple):
    """One entry per jaxpr of a linear solve (JAX prints its params as this namedtuple)."""
    matvec: Any
    vecmat: Any
    solve: Any
    transpose_solve: Any

    def transpose(self) -> "_LinearSolveTuple":
        return type(self)(self.vecmat, self.matvec, self.transpose_solve, self.solve)


class _RootTuple(NamedTuple):
    """One entry per jaxpr of a root solve: f, solve, and linearize-and-solve."""
    f: Any
    solve: Any
    l_and_s: Any


def _split(args: Sequence[Any], lengths: Sequence[int], kind: type) -> tuple[Any, list]:
    """The leading operands grouped per jaxpr (a `kind` tuple of lists), and the rest."""
    groups, start = [], 0
    for n in lengths:
        groups.append(list(args[start:start + n]))
        start += n
    return kind(*groups), list(args[start:])


def _flatten(groups: Sequence[Sequence[Any]]) -> list:
    return [x for group in groups for x in group]


# ---------------------------------------------------------------------------------------------
# the primitive: impl, abstract eval
# ---------------------------------------------------------------------------------------------

linear_solve_p = Primitive("custom_linear_solve", multiple_results=True)


def _linear_solve_impl(*args: np.ndarray, const_lengths: _LinearSolveTuple,
                       jaxprs: _LinearSolveTuple) -> list:
    params, b = _split(args, const_lengths, _LinearSolveTuple)
    return compile_jaxpr(jaxprs.solve)([*params.solve, *b])


def _linear_solve_abstract_eval(*avals: ShapedArray, const_lengths: _LinearSolveTuple,
                                jaxprs: _LinearSolveTuple) -> list[ShapedArray]:
    """x has b's types; auxiliary outputs (solve's beyond matvec's) keep solve's types."""
    b_avals = list(avals[sum(const_lengths):])
    num_aux = len(jaxprs.solve.out_avals) - len(jaxprs.matvec.out_avals)
    return b_avals + (list(jaxprs.solve.out_avals[-num_aux:]) if num_aux > 0 else [])


linear_solve_p.impl = _linear_solve_impl
linear_solve_p.abstract_eval = _linear_solve_abstract_eval


# ---------------------------------------------------------------------------------------------
# jvp: A x = b  =>  A x_dot = b_dot - (dA) x
# ---------------------------------------------------------------------------------------------

def _tangent_linear_map(matvec: ClosedJaxpr, params: list, params_dot: list, x: list) -> list:
    """(dA) x: the tangent of matvec with respect to its constants only."""
    zeros = [ad.Zero(ad.tangent_aval(abstractify(v))) for v in x]
    _, out_dot = ad.jvp_flat(common.body_fn(matvec), [*params, *x], [*params_dot, *zeros])
    return out_dot


def _linear_solve_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                      const_lengths: _LinearSolveTuple, jaxprs: _LinearSolveTuple
                      ) -> tuple[list, list]:
    from pyjax._src.primitives.elementwise import neg
    kwargs = dict(const_lengths=const_lengths, jaxprs=jaxprs)
    x = linear_solve_p.bind(*primals, **kwargs)
    params, _ = _split(primals, const_lengths, _LinearSolveTuple)
    params_dot, b_dot = _split(tangents, const_lengths, _LinearSolveTuple)
    n = len(b_dot)
    if all(type(p) is ad.Zero for p in params_dot.matvec):
        rhs = b_dot
    else:
        dax = _tangent_linear_map(jaxprs.matvec, params.matvec, params_dot.matvec, x[:n])
        rhs = [ad.add_tangents(bd, d if type(d) is ad.Zero else neg(d))
               for bd, d in zip(b_dot, dax)]
    x_dot = linear_solve_p.bind(*_flatten(params), *map(ad.instantiate, rhs), **kwargs)
    return x, [*x_dot[:n], *[ad.Zero.like(a) for a in x_dot[n:]]]


linear_solve_p.jvp = _linear_solve_jvp


# ---------------------------------------------------------------------------------------------
# transpose: the cotangent of b solves the transposed system
# ---------------------------------------------------------------------------------------------

def _linear_solve_transpose(cts: Sequence[Any], *args: Any, const_lengths: _LinearSolveTuple,
                            jaxprs: _LinearSolveTuple) -> list:
    if jaxprs.transpose_solve is None:
        raise TypeError("transpose_solve required for backwards mode automatic "
                        "differentiation of custom_linear_solve")
    params, b = _split(args, const_lengths, _LinearSolveTuple)
    if any(ad.is_undefined(x) for x in _flatten(params)):
        raise NotImplementedError("open an issue at https://github.com/google/jax !!")
    x_cts, aux_cts = list(cts[:len(b)]), cts[len(b):]
    if any(type(c) is not ad.Zero for c in aux_cts):
        raise NotImplementedError("open an issue at https://github.com/google/jax !!")
    b_cts = linear_solve_p.bind(*_flatten(params.transpose()), *map(ad.instantiate, x_cts),
                                const_lengths=const_lengths.transpose(),
                                jaxprs=jaxprs.transpose())
    return [None] * sum(const_lengths) + list(b_cts[:len(b)])


linear_solve_p.transpose = _linear_solve_transpose


# ---------------------------------------------------------------------------------------------
# batching: a fixpoint over which parts of x and b are batched
# ---------------------------------------------------------------------------------------------

#: batched bodies per closed jaxpr and (batched inputs, instantiated outputs, axis): JAX caches
#: them alike, so that matvec and vecmat batched the same way stay one (shared) jaxpr.
_batched: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()
caches.register(_batched.clear)


def _batch_jaxpr(closed: ClosedJaxpr, axis: batching.Axis, in_bat: Sequence[bool],
                 instantiate: Sequence[bool]) -> tuple[ClosedJaxpr, list[bool]]:
    """The body batched at axis 0 where `in_bat`, outputs batched at 0 where they depend on a
    batched input or are instantiated; and which outputs are batched."""
    key = (tuple(in_bat), tuple(instantiate), axis.size, axis.name, config.x64)
    try:
        hit = _batched.setdefault(closed, {}).get(key)
    except TypeError:  # an unhashable axis name
        hit, key = None, None
    if hit is None:
        jaxpr, dims = batch_body(closed, axis, [0 if b else None for b in in_bat],
                                 [0 if i else ANY for i in instantiate])
        hit = (jaxpr, [d is not None for d in dims])
        if key is not None:
            _batched[closed][key] = hit
    return hit[0], list(hit[1])


def _linear_solve_batch(axis: batching.Axis, vals: Sequence[Any], dims: Sequence[Any], *,
                        const_lengths: _LinearSolveTuple, jaxprs: _LinearSolveTuple
                        ) -> tuple[list, list]:
    params, b = _split(vals, const_lengths, _LinearSolveTuple)
    params_dims, b_dims = _split(dims, const_lengths, _LinearSolveTuple)
    params_bat = _LinearSolveTuple(*[[d is not None for d in g] for g in params_dims])
    orig_b_bat = [d is not None for d in b_dims]
    matvec, vecmat, solve, solve_t = jaxprs
    num_ops = len(matvec.out_avals)
    num_aux = len(solve.out_avals) - num_ops
    b_bat, x_bat = orig_b_bat, [False] * len(solve.out_avals)
    for _ in range(1 + len(orig_b_bat) + len(solve.out_avals)):
        solve_b, solve_x_bat = _batch_jaxpr(solve, axis, params_bat.solve + b_bat, x_bat)
        if vecmat is None:
            vecmat_b, x_bat_out = None, solve_x_bat
        else:
            vecmat_b, vecmat_x_bat = _batch_jaxpr(vecmat, axis, params_bat.vecmat + b_bat, b_bat)
            x_bat_out = [v or s for v, s in zip(vecmat_x_bat + [True] * num_aux, solve_x_bat)]
        x_bat_noaux = x_bat_out[:num_ops]
        matvec_b, matvec_b_bat = _batch_jaxpr(matvec, axis, params_bat.matvec + x_bat_noaux,
                                              b_bat)
        if solve_t is None:
            solve_t_b = None
            b_bat_out = [m or o for m, o in zip(matvec_b_bat, orig_b_bat)]
        else:
            solve_t_b, solve_t_bat = _batch_jaxpr(solve_t, axis,
                                                  params_bat.transpose_solve + x_bat_noaux,
                                                  x_bat_out)
            b_bat_out = [m or s or o for m, s, o in
                         zip(matvec_b_bat, solve_t_bat[:len(orig_b_bat)], orig_b_bat)]
        if x_bat_out == x_bat and b_bat_out == b_bat:
            break
        x_bat, b_bat = x_bat_out, b_bat_out
    else:
        raise AssertionError("Fixedpoint not reached")
    new_params = [x if d is None else batching.move_axis(x, d, 0)
                  for x, d in zip(_flatten(params), _flatten(params_dims))]
    new_b = [batching.broadcast_batch(x, axis.size, 0) if now and not was else
             batching.move_axis(x, d, 0) if now else x
             for x, d, was, now in zip(b, b_dims, orig_b_bat, b_bat)]
    outs = linear_solve_p.bind(*new_params, *new_b, const_lengths=const_lengths,
                               jaxprs=_LinearSolveTuple(matvec_b, vecmat_b, solve_b, solve_t_b))
    return outs, [0 if bat else None for bat in solve_x_bat]


install_batch_rule(linear_solve_p, _linear_solve_batch,
                   lambda params: [j for j in params["jaxprs"] if j is not None])


# ---------------------------------------------------------------------------------------------
# custom_linear_solve
# ---------------------------------------------------------------------------------------------

def _check_tree(func_name: str, expected_name: str, actual_tree: Any, expected_tree: Any,
                has_aux: bool = False) -> None:
    """JAX's errors for a function whose output tree differs from the expected one."""
    if has_aux:
        children = actual_tree.children()
        if len(children) != 2:
            raise ValueError(
                f"{func_name}() produced a pytree with structure {actual_tree}, but a pytree "
                "tuple with auxiliary output was expected because has_aux was set to True.")
        actual_tree = children[0]
    if actual_tree != expected_tree:
        raise TypeError(f"{func_name}() output pytree structure must match {expected_name}, "
                        f"got {actual_tree} and {expected_tree}.")


def _check_shapes(func_name: str, expected_name: str, actual: Sequence[Any],
                  expected: Sequence[Any]) -> None:
    actual_shapes = [np.shape(x) for x in actual]
    expected_shapes = [np.shape(x) for x in expected]
    if actual_shapes != expected_shapes:
        raise ValueError(f"{func_name}() output shapes must match {expected_name}, got "
                         f"{actual_shapes} and {expected_shapes}")


def _shape_checked(fun: Callable, name: str, b_leaves: list, has_aux: bool) -> Callable:
    def checked(x: Any) -> Any:
        if has_aux:
            y, aux = fun(x)
            _check_shapes(name, "b", tree_leaves(y), b_leaves)
            return y, aux
        y = fun(x)
        _check_shapes(name, "b", tree_leaves(y), b_leaves)
        return y
    return checked


def _transpose_one_output(matvec: Callable, b: Any) -> Callable:
    """vecmat: jax.linear_transpose of matvec at b's shapes, as a function of one argument."""
    from pyjax._src.transforms.ad_api import linear_transpose
    transposed = linear_transpose(matvec, b)

    def vecmat(y: Any) -> Any:
        x, = transposed(y)
        return x
    return vecmat


def custom_linear_solve(matvec: Callable, b: Any, solve: Callable[[Callable, Any], Any],
                        transpose_solve: Callable[[Callable, Any], Any] | None = None,
                        symmetric: bool = False, has_aux: bool = False) -> Any:
    """`solve(matvec, b)`, differentiated implicitly: tangents and cotangents solve the linear
    system again (with `transpose_solve` for reverse mode) instead of running through `solve`."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_leaves, tree = tree_flatten(b)
    b_avals = [abstractify(x) for x in b_leaves]
    args_tree = tree_flatten((b,))[1]
    matvec_jaxpr, matvec_consts, out_tree = common.trace_body(
        _shape_checked(matvec, "matvec", b_leaves, False), args_tree, b_avals,
        "custom_linear_solve", (b,))
    _check_tree("matvec", "b", out_tree, tree, False)
    solve_jaxpr, solve_consts, out_tree = common.trace_body(
        _shape_checked(partial(solve, matvec), "solve", b_leaves, has_aux), args_tree, b_avals,
        "custom_linear_solve solve", (matvec, b))
    _check_tree("solve", "b", out_tree, tree, has_aux)
    if transpose_solve is None:
        vecmat_jaxpr = tr_solve_jaxpr = None
        vecmat_consts: list = []
        tr_solve_consts: list = []
    else:
        if symmetric:
            vecmat, vecmat_jaxpr, vecmat_consts = matvec, matvec_jaxpr, matvec_consts
        else:  # JAX's: the linear transpose of matvec, staged anew (not of matvec_jaxpr)
            vecmat = _transpose_one_output(matvec, b)
            vecmat_jaxpr, vecmat_consts, _ = common.trace_body(
                vecmat, args_tree, b_avals, "custom_linear_solve transpose_solve",
                (matvec, b))
        tr_solve_jaxpr, tr_solve_consts, out_tree = common.trace_body(
            _shape_checked(partial(transpose_solve, vecmat), "transpose_solve", b_leaves,
                           has_aux), args_tree, b_avals, "custom_linear_solve transpose_solve",
            (matvec, b))
        _check_tree("transpose_solve", "b", out_tree, tree, has_aux)
    all_consts = [matvec_consts, vecmat_consts, solve_consts, tr_solve_consts]
    const_lengths = _LinearSolveTuple(*map(len, all_consts))
    jaxprs = _LinearSolveTuple(matvec_jaxpr, vecmat_jaxpr, solve_jaxpr, tr_solve_jaxpr)
    out = linear_solve_p.bind(*_flatten(all_consts), *b_leaves, const_lengths=const_lengths,
                              jaxprs=jaxprs)
    return tree_unflatten(out_tree, out)


# ---------------------------------------------------------------------------------------------
# custom_root
# ---------------------------------------------------------------------------------------------

def _custom_root_fun(const_lengths: _RootTuple, jaxprs: _RootTuple, *args: Any) -> list:
    params, initial_guess = _split(args, const_lengths, _RootTuple)
    return common.body_fn(jaxprs.solve)(*params.solve, *initial_guess)


_custom_root_fun.__name__ = "_custom_root"
_custom_root = custom_jvp(_custom_root_fun, nondiff_argnums=(0, 1))


def _root_jvp(const_lengths: _RootTuple, jaxprs: _RootTuple, primals: tuple, tangents: tuple
              ) -> tuple[list, list]:
    """u*(m) solves F(m, u) = 0, so du* = -(d_u F)^-1 (d_m F)[dm] (implicit function theorem)."""
    from pyjax._src.primitives.elementwise import neg
    params, _ = _split(primals, const_lengths, _RootTuple)
    sol = _custom_root(const_lengths, jaxprs, *primals)
    n = len(jaxprs.f.out_avals)
    solution, aux = list(sol[:n]), list(sol[n:])
    params_dot, _ = _split(tangents, const_lengths, _RootTuple)
    f = common.body_fn(jaxprs.f)
    _, rhs = ad.jvp_flat(lambda *p: f(*p, *solution), params.f, params_dot.f)
    solved = common.body_fn(jaxprs.l_and_s)(*params.l_and_s, *solution,
                                            *map(ad.instantiate, rhs))
    solution_dot = [neg(t) for t in solved]
    zeros = [ad.zeros_like_aval(ShapedArray(abstractify(a).shape, abstractify(a).dtype))
             for a in aux]
    return solution + aux, solution_dot + zeros


_custom_root.defjvp(_root_jvp)


def custom_root(f: Callable, initial_guess: Any, solve: Callable[[Callable, Any], Any],
                tangent_solve: Callable[[Callable, Any], Any], has_aux: bool = False) -> Any:
    """`solve(f, initial_guess)`, differentiated implicitly at the root (with respect to what
    `f` closes over) through `tangent_solve` applied to `f` linearized there."""
    from pyjax._src.transforms.ad_api import linearize
    guess_leaves, guess_tree = tree_flatten(initial_guess)
    guess_avals = [abstractify(x) for x in guess_leaves]
    args_tree = tree_flatten((initial_guess,))[1]
    f_jaxpr, f_consts, out_tree = common.trace_body(f, args_tree, guess_avals, "custom_root",
                                                    (initial_guess,))
    _check_tree("f", "initial_guess", out_tree, guess_tree, False)
    solve_jaxpr, solve_consts, solution_tree = common.trace_body(
        partial(solve, f), args_tree, guess_avals, "custom_root solve", (f, initial_guess))
    _check_tree("solve", "initial_guess", solution_tree, guess_tree, has_aux)

    def linearize_and_solve(x: Any, b: Any) -> Any:
        _, f_jvp = linearize(f, x)
        return tangent_solve(f_jvp, b)

    pair_tree = tree_flatten((initial_guess, initial_guess))[1]
    l_and_s_jaxpr, l_and_s_consts, out_tree = common.trace_body(
        linearize_and_solve, pair_tree, guess_avals + guess_avals,
        "custom_root tangent_solve", (initial_guess, initial_guess))
    _check_tree("tangent_solve", "x", out_tree, guess_tree, False)
    all_consts = [f_consts, solve_consts, l_and_s_consts]
    const_lengths = _RootTuple(*map(len, all_consts))
    jaxprs = _RootTuple(f_jaxpr, solve_jaxpr, l_and_s_jaxpr)
    solution = _custom_root(const_lengths, jaxprs, *_flatten(all_consts), *guess_leaves)
    return tree_unflatten(solution_tree, solution)
