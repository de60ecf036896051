"""`cond` and `switch`: one primitive, `cond`, holding a closed jaxpr per branch.

The operands are `index, *consts, *args`: the index (int32, clamped by `switch`) picks the
branch; every branch takes the constants of all branches (JAX merges them) and the operands.
Its rules: jvp (branches jvp'd with a common set of non-zero tangents), partial evaluation
(known branches return their residuals in merged slots, the unknown branches read them),
transpose (branches transposed with the residuals first), batching (a batched index becomes
`select_n` over every branch's result, as in JAX).
"""
from __future__ import annotations

from collections.abc import Sequence as SequenceABC
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.backend.executor import compile_jaxpr
from pyjax._src.config import config
from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr
from pyjax._src.core.primitive import Primitive
from pyjax._src.parallel import propagation
from pyjax._src.core.trace import Tracer, use_trace
from pyjax._src.primitives._rules import make_primitive
from pyjax._src.primitives.control_flow import common
from pyjax._src.primitives.control_flow.batch_util import batch_body, install_batch_rule
from pyjax._src.primitives.control_flow.empty import empty_like_aval
from pyjax._src.transforms import ad, batching
from pyjax._src.transforms.staging import abstractify
from pyjax._src.tree_util import tree_flatten, tree_unflatten

cond_p = Primitive("cond", multiple_results=True)


def _cond_impl(index: np.ndarray, *args: np.ndarray, branches: tuple, **_: Any) -> list:
    i = min(max(int(index), 0), len(branches) - 1)
    return compile_jaxpr(branches[i])(args)


def _cond_abstract_eval(index: ShapedArray, *avals: ShapedArray, branches: tuple,
                        **_: Any) -> list[ShapedArray]:
    if index.shape != () or index.dtype != dtypes.int32:
        raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
    outs = branches[0].out_avals
    return [ShapedArray(a.shape, a.dtype, all(b.out_avals[i].weak_type for b in branches))
            for i, a in enumerate(outs)]


cond_p.impl = _cond_impl
cond_p.abstract_eval = _cond_abstract_eval
def _cond_sharding(eqn: Any, ins: list, sizes: dict) -> list:
    """The branches' results as their traced types say (every branch gives the same)."""
    return [propagation.typed_spec(a) for a in eqn.params["branches"][0].out_avals]


cond_p.sharding_rule = _cond_sharding


# ---------------------------------------------------------------------------------------------
# jvp
# ---------------------------------------------------------------------------------------------

def _cond_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, branches: tuple,
              **params: Any) -> tuple[list, list]:
    index, *ops = primals
    ops_nz = [type(t) is not ad.Zero for t in tangents[1:]]
    out_nzs = [common.jvp_jaxpr(b, ops_nz, False)[1] for b in branches]
    out_nz = [any(nz) for nz in zip(*out_nzs)]
    branches_jvp = tuple(common.jvp_jaxpr(b, ops_nz, out_nz)[0] for b in branches)
    ops_dot = [t for t in tangents[1:] if type(t) is not ad.Zero]
    out = cond_p.bind(index, *ops, *ops_dot, branches=branches_jvp, **params)
    n = len(out_nz)
    primals_out, given = out[:n], iter(out[n:])
    return primals_out, [next(given) if nz else ad.Zero.like(p)
                         for p, nz in zip(primals_out, out_nz)]


cond_p.jvp = _cond_jvp


# ---------------------------------------------------------------------------------------------
# partial evaluation (reverse mode's first half)
# ---------------------------------------------------------------------------------------------

def _merge_branch_residuals(res_avals_per_branch: list[list[ShapedArray]]
                            ) -> tuple[list[ShapedArray], list[list[int]]]:
    """Share residual slots between branches by type: the k-th residual of a type in one
    branch and the k-th of that type in another use the same slot (JAX's merging)."""
    def tagged(avals: list) -> list:
        seen: dict = {}
        out = []
        for a in avals:
            key = (a.shape, a.dtype, a.weak_type)
            out.append((key, seen.get(key, 0)))
            seen[key] = seen.get(key, 0) + 1
        return out
    tags = [tagged(avals) for avals in res_avals_per_branch]
    slots: dict = {}
    all_avals = []
    for avals, branch_tags in zip(res_avals_per_branch, tags):
        for a, tag in zip(avals, branch_tags):
            if tag not in slots:
                slots[tag] = len(all_avals)
                all_avals.append(a)
    return all_avals, [[slots[t] for t in branch_tags] for branch_tags in tags]


def _join_known_outputs(known: ClosedJaxpr, all_res: list[ShapedArray], slots: list[int],
                        num_outs: int) -> ClosedJaxpr:
    """A known branch returning every residual slot: its own residuals in their slots, empty
    arrays elsewhere."""
    def augmented(*args: Any) -> list:
        outs = common.body_fn(known)(*args)
        filled = [empty_like_aval(a) for a in all_res]
        for slot, value in zip(slots, outs[num_outs:]):
            filled[slot] = value
        return [*outs[:num_outs], *filled]
    return common.trace_flat(augmented, known.in_avals)


def _join_unknown_inputs(staged: ClosedJaxpr, all_res: list[ShapedArray], slots: list[int]
                         ) -> ClosedJaxpr:
    """An unknown branch taking every residual slot (reading only its own)."""
    from pyjax._src.core.jaxpr import Jaxpr, Var
    j = staged.jaxpr
    res_vars = [Var(a) for a in all_res]
    for slot, v in zip(slots, j.invars[:len(slots)]):
        res_vars[slot] = v
    return ClosedJaxpr(Jaxpr(j.constvars, [*res_vars, *j.invars[len(slots):]], j.outvars,
                             j.eqns, j.debug_info), staged.consts)


def _cond_partial_eval(pe: Any, args: tuple, params: dict) -> list:
    branches = params["branches"]
    extra = {k: v for k, v in params.items() if k != "branches"}
    index, *ops = args
    if pe.is_unknown(index):
        return pe.staging.process_primitive(cond_p, args, params)
    ops_uk = [pe.is_unknown(x) for x in ops]
    out_uks = [ad.partial_eval_jaxpr(b, ops_uk, False)[2] for b in branches]
    out_uk = [any(uks) for uks in zip(*out_uks)]
    split = [ad.partial_eval_jaxpr(b, ops_uk, out_uk) for b in branches]
    all_res, slots = _merge_branch_residuals([s[3] for s in split])
    num_known_outs = len(out_uk) - sum(out_uk)
    known = tuple(_join_known_outputs(s[0], all_res, sl, num_known_outs)
                  for s, sl in zip(split, slots))
    unknown = tuple(_join_unknown_inputs(s[1], all_res, sl) for s, sl in zip(split, slots))
    with use_trace(pe.parent):
        known_outs = cond_p.bind(index, *[x for x, uk in zip(ops, ops_uk) if not uk],
                                 branches=known, **extra)
    outs_known, res = known_outs[:num_known_outs], known_outs[num_known_outs:]
    staged = pe.staging.process_primitive(
        cond_p, (index, *res, *[x for x, uk in zip(ops, ops_uk) if uk]),
        {"branches": unknown, **extra})
    outs_known_it, staged_it = iter(outs_known), iter(staged)
    return [next(staged_it) if uk else next(outs_known_it) for uk in out_uk]


cond_p.partial_eval = _cond_partial_eval


# ---------------------------------------------------------------------------------------------
# transpose
# ---------------------------------------------------------------------------------------------

def _transpose_branch(branch: ClosedJaxpr, num_res: int) -> ClosedJaxpr:
    res_avals, lin_avals = branch.in_avals[:num_res], branch.in_avals[num_res:]

    def transposed(*args: Any) -> list:
        res, cts = args[:num_res], args[num_res:]
        primals = [*res, *[ad.UndefinedPrimal(a) for a in lin_avals]]
        cts_in = ad.transpose_jaxpr(branch.jaxpr, branch.consts, primals, list(cts))
        return [ad.instantiate(c) for c in cts_in]

    return common.trace_flat(transposed, [*res_avals, *branch.out_avals])


def _cond_transpose(cts: Sequence[Any], index: Any, *ops: Any, branches: tuple,
                    **params: Any) -> list:
    linear = [ad.is_undefined(x) for x in ops]
    num_res = len(ops) - sum(linear)
    if any(linear[:num_res]):
        raise NotImplementedError("cond transpose expects residuals before linear operands")
    trans = tuple(_transpose_branch(b, num_res) for b in branches)
    cts = [ad.instantiate(c) for c in cts]
    out = iter(cond_p.bind(index, *ops[:num_res], *cts, branches=trans, **params))
    return [None, *[next(out) if lin else None for lin in linear]]


cond_p.transpose = _cond_transpose


# ---------------------------------------------------------------------------------------------
# batching
# ---------------------------------------------------------------------------------------------

def _bcast_to(pred: Any, x: Any) -> Any:
    from pyjax._src.primitives.shape import broadcast_in_dim
    if np.ndim(pred) != np.ndim(x):
        return broadcast_in_dim(pred, np.shape(x), tuple(range(np.ndim(pred))))
    return pred


def _cond_batch(axis: batching.Axis, vals: Sequence[Any], dims: Sequence[Any], *,
                branches: tuple, **params: Any) -> tuple[list, list]:
    from pyjax._src.primitives.elementwise import eq, select_n
    from pyjax._src.primitives.extra import stop_gradient
    index, *ops = vals
    index_dim, *op_dims = dims
    if index_dim is not None:
        index, *ops = [batching.bdim_at_front(x, d, axis.size) for x, d in zip(vals, dims)]
        n_in = len(branches[0].in_avals)
        batched = [batch_body(b, axis, [0] * n_in, [0] * len(b.out_avals))[0]
                   for b in branches]
        outs_per_branch = []
        for i, body in enumerate(batched):
            pred = eq(index, np.int32(i) if index.dtype == dtypes.int32 else
                      np.asarray(i, index.dtype))
            ops_ = [select_n(_bcast_to(pred, x), stop_gradient(x), x) for x in ops]
            outs_per_branch.append(common.body_fn(body)(*ops_))
        out = [select_n(_bcast_to(index, outs[0]), *outs) for outs in zip(*outs_per_branch)]
        return out, [0] * len(out)
    ops = [x if d is None else batching.move_axis(x, d, 0) for x, d in zip(ops, op_dims)]
    in_dims = [None if d is None else 0 for d in op_dims]
    out_bats = [batch_body(b, axis, in_dims)[1] for b in branches]
    out_dims = [0 if any(d is not None for d in ds) else None for ds in zip(*out_bats)]
    batched = tuple(batch_body(b, axis, in_dims, out_dims)[0] for b in branches)
    return cond_p.bind(index, *ops, branches=batched, **params), out_dims


install_batch_rule(cond_p, _cond_batch, lambda params: params["branches"])


# ---------------------------------------------------------------------------------------------
# API
# ---------------------------------------------------------------------------------------------

class _NoOperand:
    pass


_no_operand = _NoOperand()


def _trace_branches(funs: Sequence[Callable], operands: tuple, names: Sequence[str]
                    ) -> tuple[list[ClosedJaxpr], list, Any, list]:
    """Trace every branch on the operands' avals and merge their constants (deduplicated by
    identity): each branch takes all constants, then the operands."""
    leaves, in_tree = tree_flatten(operands)
    avals = [abstractify(x) for x in leaves]
    traced = [common.trace_body(f, in_tree, avals, "cond", operands) for f in funs]
    first_tree = traced[0][2]
    for (jaxpr, _, tree), fun, name in zip(traced[1:], funs[1:], names[1:]):
        common.check_branch_outputs("cond" if len(funs) == 2 else "switch", names[0], name,
                                    funs[0], fun, first_tree, traced[0][0].out_avals,
                                    tree, jaxpr.out_avals)
    all_consts = [c for _, consts, _ in traced for c in consts]
    unique: dict[int, int] = {}
    merged = []
    for c in all_consts:
        if id(c) not in unique:
            unique[id(c)] = len(merged)
            merged.append(c)
    jaxprs = []
    from pyjax._src.core.jaxpr import Jaxpr, Var
    for jaxpr, consts, _ in traced:
        j = jaxpr.jaxpr
        own = j.invars[:len(consts)]
        const_vars: list = [None] * len(merged)
        for c, v in zip(consts, own):
            if const_vars[unique[id(c)]] is None:
                const_vars[unique[id(c)]] = v
        mapping = {}
        for c, v in zip(consts, own):
            mapping[v] = const_vars[unique[id(c)]]
        const_vars = [v if v is not None else Var(abstractify(c))
                      for v, c in zip(const_vars, merged)]
        j = _substitute(j, mapping)
        jaxprs.append(ClosedJaxpr(Jaxpr([], [*const_vars, *j.invars[len(consts):]],
                                        j.outvars, j.eqns, j.debug_info), jaxpr.consts))
    return jaxprs, merged, first_tree, leaves


def _substitute(jaxpr: Any, mapping: dict) -> Any:
    """Rename variables (for constants that two traces captured twice)."""
    if all(k is v for k, v in mapping.items()):
        return jaxpr
    from pyjax._src.core.jaxpr import Eqn, Jaxpr, Var
    sub = lambda a: mapping.get(a, a) if type(a) is Var else a  # noqa: E731
    eqns = [Eqn(e.primitive, [sub(a) for a in e.invars], e.outvars, e.params, e.source_info)
            for e in jaxpr.eqns]
    return Jaxpr(jaxpr.constvars, jaxpr.invars, [sub(v) for v in jaxpr.outvars], eqns,
                 jaxpr.debug_info)


def _bind_branches(index: Any, jaxprs: list[ClosedJaxpr], consts: list, leaves: list,
                   out_tree: Any, **params: Any) -> Any:
    """Prune outputs every branch forwards from the same input, bind, and rebuild outputs."""
    fwds = [common.forwarding(j.jaxpr) for j in jaxprs]
    in_fwd = [f[0] if all(g == f[0] for g in f) else None for f in zip(*fwds)]
    keep = [f is None for f in in_fwd]
    jaxprs = [common.prune_outputs(j, keep) for j in jaxprs]
    out = iter(cond_p.bind(index, *consts, *leaves, branches=tuple(jaxprs), **params))
    inputs = [*consts, *leaves]
    outs = [next(out) if f is None else _as_array(inputs[f]) for f in in_fwd]
    return tree_unflatten(out_tree, outs)


def _as_array(x: Any) -> Any:
    from pyjax._src.numpy.lax_numpy import asarray
    return x if isinstance(x, Tracer) else asarray(x)


def _check_scalar_pred(pred: Any) -> None:
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, SequenceABC) or np.ndim(pred) != 0:
        raise TypeError(f"Pred must be a scalar, got {pred} of " +
                        (f"type {type(pred)}" if isinstance(pred, SequenceABC)
                         else f"shape {np.shape(pred)}."))


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any,
         operand: Any = _no_operand) -> Any:
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`, staged as one `cond`
    equation whose branches are both traced (and type-checked against each other)."""
    from pyjax._src.primitives.elementwise import convert_element_type
    if not (callable(true_fun) and callable(false_fun)):
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    if operand is not _no_operand:
        if operands:
            raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                            f"passed, got operand={operand!r} and positional operands "
                            f"{operands!r}")
        operands = (operand,)
    _check_scalar_pred(pred)
    try:
        pred_dtype = dtypes.result_type(pred)
    except TypeError as err:
        raise TypeError(f"Pred type must be either boolean or number, got {pred}.") from err
    if pred_dtype != dtypes.bool_:
        if pred_dtype.kind in "iuf":
            pred = pred != 0
        else:
            raise TypeError(f"Pred type must be either boolean or number, got {pred_dtype}.")
    if config.disable_jit and not isinstance(pred, Tracer):
        return true_fun(*operands) if pred else false_fun(*operands)
    jaxprs, consts, out_tree, leaves = _trace_branches((true_fun, false_fun), operands,
                                                       ("true_fun", "false_fun"))
    index = convert_element_type(pred, np.int32)
    return _bind_branches(index, [jaxprs[1], jaxprs[0]], consts, leaves, out_tree)


def switch(index: Any, branches: Sequence[Callable], *operands: Any,
           operand: Any = _no_operand) -> Any:
    """`branches[index](*operands)`, the index clamped into range."""
    from pyjax._src.primitives.elementwise import clamp, convert_element_type
    if not isinstance(index, (int, np.integer)) and not hasattr(index, "dtype"):
        raise TypeError(f"Index type must be an integer, got {index}.")
    if operand is not _no_operand:
        if operands:
            raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                            f"passed, got operand={operand!r} and positional operands "
                            f"{operands!r}")
        operands = (operand,)
    if len(np.shape(index)) != 0:
        raise TypeError(f"Branch index must be scalar, got {index} of shape "
                        f"{np.shape(index)}.")
    index_dtype = dtypes.result_type(index)
    if not dtypes.is_integer(index_dtype) or index_dtype == dtypes.bool_:
        raise TypeError(f"Index type must be an integer, got {index_dtype}.")
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    index = convert_element_type(index, np.int32)
    index = clamp(np.int32(0), index, np.int32(len(branches) - 1))
    if config.disable_jit and not isinstance(index, Tracer):
        return branches[int(index)](*operands)
    jaxprs, consts, out_tree, leaves = _trace_branches(
        branches, operands, [f"branch {i}" for i in range(len(branches))])
    return _bind_branches(index, jaxprs, consts, leaves, out_tree)


# ---------------------------------------------------------------------------------------------
# platform_dependent: a cond over platform-specific branches, indexed by `platform_index`
# ---------------------------------------------------------------------------------------------

PLATFORM = "cpu"  # the one platform pyjax runs on


def _platform_index_impl(*, platforms: tuple) -> np.ndarray:
    for i, names in enumerate(platforms):
        if names is None or PLATFORM in names:
            return np.asarray(i, np.int32)
    raise NotImplementedError(f"MLIR translation rule for primitive 'platform_index(platforms="
                              f"{platforms})' not found for platform {PLATFORM}")


platform_index_p = make_primitive(
    "platform_index", _platform_index_impl,
    lambda *, platforms: ShapedArray((), dtypes.int32, False))
ad.defjvp_zero(platform_index_p)


def platform_dependent(*args: Any, default: Callable | None = None,
                       **per_platform: Callable) -> Any:
    """`per_platform[platform](*args)`, else `default(*args)`.  Traced, every branch is staged
    in a `cond` indexed by `platform_index` (as JAX does); eagerly the CPU's branch runs."""
    branches: list[tuple[list[str], Callable]] = []
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a callable.")
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
        for names, fn in branches:
            if fn == branch:
                names.append(name)
                break
        else:
            branches.append(([name], branch))
    platforms: tuple = tuple(tuple(names) for names, _ in branches)
    funs = [fn for _, fn in branches]
    if default is not None:
        if not callable(default):
            raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
        funs.append(default)
        platforms = platforms + (None,)
    index = platform_index_p.bind(platforms=platforms)
    if not isinstance(index, Tracer):
        return funs[int(index)](*args)
    jaxprs, consts, out_tree, leaves = _trace_branches(
        funs, args, [f"branch {i}" for i in range(len(funs))])
    return _bind_branches(index, jaxprs, consts, leaves, out_tree,
                          branches_platforms=platforms)

