"""What the control-flow primitives share: bodies traced to closed jaxprs whose constants are
leading inputs (JAX hoists them the same way), jaxpr surgery (forwarding, pruning, dead code,
moving binders), jvp/batch/partial-eval of a body, and JAX's type errors."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray, mismatch_extra, typematch
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Var, dce, eval_jaxpr
from pyjax._src.transforms import ad
from pyjax._src.transforms.staging import (
    DebugInfo, abstractify, fun_sourceinfo, trace_to_jaxpr)
from pyjax._src.tree_util import (
    DictKey, SequenceKey, keystr, tree_flatten, tree_flatten_with_path, tree_unflatten)


# ---------------------------------------------------------------------------------------------
# Tracing bodies
# ---------------------------------------------------------------------------------------------

def trace_body(fun: Callable, in_tree: Any, in_avals: Sequence[ShapedArray], traced_for: str,
               debug_args: tuple = ()) -> tuple[ClosedJaxpr, list, Any]:
    """Trace `fun(*tree_unflatten(in_tree, leaves))` once: (the closed jaxpr with its constants
    as leading inputs, those constants, the output tree)."""
    out_tree_box: list = []

    def flat_fun(*leaves: Any) -> list:
        out_leaves, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, list(leaves))))
        out_tree_box.append(out_tree)
        return out_leaves

    closed = trace_to_jaxpr(flat_fun, list(in_avals), DebugInfo(traced_for, fun, debug_args))
    body, consts = separate_consts(closed)
    return body, consts, out_tree_box[0]


def trace_flat(fun: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray]
               ) -> ClosedJaxpr:
    """Trace a flat function of flat arguments into a closed jaxpr without constvars (outer
    values it closes over must not be tracers: rules trace only their own bodies)."""
    return trace_to_jaxpr(fun, list(in_avals))


def separate_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list]:
    """The jaxpr with its constvars turned into leading invars, and the constant values."""
    j = closed.jaxpr
    if not j.constvars:
        return closed, []
    jaxpr = Jaxpr([], [*j.constvars, *j.invars], j.outvars, j.eqns, j.debug_info)
    return ClosedJaxpr(jaxpr, []), list(closed.consts)


def body_fn(closed: ClosedJaxpr) -> Callable[..., list]:
    return lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args)


# ---------------------------------------------------------------------------------------------
# Jaxpr surgery
# ---------------------------------------------------------------------------------------------

def forwarding(jaxpr: Jaxpr) -> list[int | None]:
    """For each output, the index of the input it returns unchanged (None if computed)."""
    position = {v: i for i, v in enumerate(jaxpr.invars)}
    return [position.get(v) if type(v) is Var else None for v in jaxpr.outvars]


def prune_outputs(closed: ClosedJaxpr, keep: Sequence[bool]) -> ClosedJaxpr:
    if all(keep):
        return closed
    jaxpr, _ = dce(closed.jaxpr, keep)
    return ClosedJaxpr(jaxpr, closed.consts)


def move_binders_to_front(closed: ClosedJaxpr, to_move: Sequence[bool]) -> ClosedJaxpr:
    j = closed.jaxpr
    invars = [v for v, m in zip(j.invars, to_move) if m] + \
        [v for v, m in zip(j.invars, to_move) if not m]
    return ClosedJaxpr(Jaxpr(j.constvars, invars, j.outvars, j.eqns, j.debug_info),
                       closed.consts)


def move_binders_to_back(closed: ClosedJaxpr, to_move: Sequence[bool]) -> ClosedJaxpr:
    return move_binders_to_front(closed, [not m for m in to_move])


def partition(flags: Sequence[bool], xs: Sequence[Any]) -> tuple[list, list]:
    """(the xs whose flag is False, those whose flag is True)."""
    return ([x for f, x in zip(flags, xs) if not f], [x for f, x in zip(flags, xs) if f])


def merge(flags: Sequence[bool], falses: Sequence[Any], trues: Sequence[Any]) -> list:
    """Inverse of `partition`."""
    f_it, t_it = iter(falses), iter(trues)
    return [next(t_it) if f else next(f_it) for f in flags]


# ---------------------------------------------------------------------------------------------
# Transformations of a body
# ---------------------------------------------------------------------------------------------

def differentiable(aval: ShapedArray) -> bool:
    return dtypes.is_inexact(aval.dtype)


def jvp_jaxpr(closed: ClosedJaxpr, nonzeros: Sequence[bool], instantiate: Sequence[bool] | bool
              ) -> tuple[ClosedJaxpr, list[bool]]:
    """The body's jvp: (primals, non-zero tangents) -> (primal outputs, tangents of the outputs
    that are non-zero or instantiated); and which output tangents it returns."""
    n = len(closed.in_avals)
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(closed.out_avals)
    # tangent binders are strongly typed: instantiated zeros and cotangents are
    in_tangent_avals = [ShapedArray(a.shape, a.dtype, False)
                        for a, nz in zip(map(ad.tangent_aval, closed.in_avals), nonzeros) if nz]
    out_nz_box: list = []

    def jvp_body(*args: Any) -> list:
        primals, given = args[:n], iter(args[n:])
        tangents = [next(given) if nz else ad.Zero(ad.tangent_aval(a))
                    for nz, a in zip(nonzeros, closed.in_avals)]
        outs, outs_dot = ad.jvp_flat(body_fn(closed), primals, tangents)
        out_nz = [(type(t) is not ad.Zero or inst) and differentiable(a)
                  for t, inst, a in zip(outs_dot, instantiate, closed.out_avals)]
        out_nz_box.append(out_nz)
        return [*outs, *[ad.instantiate(t) for t, nz in zip(outs_dot, out_nz) if nz]]

    jaxpr = trace_flat(jvp_body, [*closed.in_avals, *in_tangent_avals])
    return jaxpr, out_nz_box[0]


# ---------------------------------------------------------------------------------------------
# Partial evaluation of a body: known part (outputs + residuals) and unknown part
# ---------------------------------------------------------------------------------------------

# ---------------------------------------------------------------------------------------------
# Type errors, worded as JAX words them
# ---------------------------------------------------------------------------------------------

def _capitalize(s: str) -> str:
    return s[0].upper() + s[1:]


def _bullets(diffs: list[str], sep: str) -> str:
    if len(diffs) == 1:
        return f"{_capitalize(diffs[0])}.\n"
    return "\n".join(f"  * {d};{sep}" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n" \
        if sep else "\n".join(f"  * {d};" for d in diffs[:-1]) + f"\n  * {diffs[-1]}.\n"


def _paths(tree: Any, n: int) -> list:
    try:
        leaves = tree_flatten_with_path(tree_unflatten(tree, [0] * n))[0]
        return [p for p, _ in leaves]
    except Exception:  # noqa: BLE001 - a message must still be built
        return [None] * n


class _LeafType(type):
    def __repr__(cls) -> str:
        return "pytree leaf"


_Leaf = _LeafType("Leaf", (), {})


def structure_differences(tree1: Any, tree2: Any) -> list[tuple]:
    """(path, thing1, thing2, explanation) for each place two tree structures differ, worded
    as JAX's equality_errors words them."""
    def walk(path: tuple, t1: Any, t2: Any) -> list:
        leaf1, leaf2 = type(t1) is _Leaf, type(t2) is _Leaf
        if leaf1 and leaf2:
            return []
        if type(t1) is not type(t2):
            return [(path, str(type(t1)), str(type(t2)), "their Python types differ")]
        if isinstance(t1, (list, tuple)):
            if len(t1) != len(t2):
                return [(path, f"{type(t1).__name__} of length {len(t1)}",
                         f"{type(t2).__name__} of length {len(t2)}",
                         "the lengths do not match")]
            return [d for i, (a, b) in enumerate(zip(t1, t2))
                    for d in walk(path + (SequenceKey(i),), a, b)]
        if isinstance(t1, dict):
            if set(t1) != set(t2):
                n1, n2 = len(t1), len(t2)
                if n1 == n2:  # same number of children: the metadata (sorted keys) differs
                    return [(path, f"{type(t1)} with pytree metadata {tuple(sorted(t1))}",
                             f"{type(t2)} with pytree metadata {tuple(sorted(t2))}",
                             "the pytree node metadata does not match")]
                diff = " ".join(repr(k) for k in set(t1).symmetric_difference(t2))
                return [(path, f"{type(t1)} with {n1} child{'ren' if n1 > 1 else ''}",
                         f"{type(t2)} with {n2} child{'ren' if n2 > 1 else ''}",
                         "the numbers of children do not match, with the symmetric "
                         f"difference of key sets: {{{diff}}}")]
            return [d for k in sorted(t1) for d in walk(path + (DictKey(k),), t1[k], t2[k])]
        return [(path, str(type(t1)), str(type(t2)), "their structures differ")]

    leaf = _Leaf()
    return walk((), tree_unflatten(tree1, [leaf] * tree1.num_leaves),
                tree_unflatten(tree2, [leaf] * tree2.num_leaves))


def check_branch_outputs(api: str, name1: str, name2: str, f1: Callable, f2: Callable,
                         tree1: Any, avals1: Sequence[ShapedArray], tree2: Any,
                         avals2: Sequence[ShapedArray]) -> None:
    """JAX's TypeErrors for branches whose outputs differ in structure or type."""
    if tree1 != tree2:
        diffs = [f"{name1} output{(' at path ' + keystr(p)) if p else ''} is a {t1} but "
                 f"{name2} output{(' at path ' + keystr(p)) if p else ''} is a {t2}, so {why}"
                 for p, t1, t2, why in structure_differences(tree1, tree2)]
        if not diffs:
            return
        text = f"{diffs[0]}.\n" if len(diffs) == 1 else \
            "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"
        raise TypeError(
            f"{api} branch outputs must have the same pytree structure, but they differ:\n\n"
            f"{name1} is {fun_sourceinfo(f1)}\n{name2} is {fun_sourceinfo(f2)}\n\n"
            f"{text}\n"
            f"Revise {name1} and/or {name2} so that they have the same pytree structure.")
    paths = _paths(tree1, len(avals1))
    diffs = [f"the output of {name1}{(' at path ' + keystr(p)) if p else ''} has type "
             f"{a.str_short()} but the corresponding output of {name2} has type "
             f"{b.str_short()}{mismatch_extra(a, b)}"
             for p, a, b in zip(paths, avals1, avals2) if not typematch(a, b)]
    if diffs:
        raise TypeError(
            f"{api} branches must have equal output types but they differ.\n\n"
            f"{name1} is {fun_sourceinfo(f1)}\n{name2} is {fun_sourceinfo(f2)}\n\n"
            f"{_bullets(diffs, '')}\n"
            f"Revise {name1} and/or {name2} so that all output types match.")


def check_carry_type(name: str, body_fun: Callable, in_tree: Any,
                     in_avals: Sequence[ShapedArray], out_tree: Any,
                     out_avals: Sequence[ShapedArray]) -> None:
    """JAX's TypeErrors for a loop body whose carry output differs from its carry input."""
    try:
        carry_name = list(inspect.signature(body_fun).parameters)[0]
    except (ValueError, TypeError, IndexError):
        carry_name = None
    if carry_name:
        def component(p: Any) -> str:
            return (f"the input carry component {carry_name}{keystr(p)}" if p
                    else f"the input carry {carry_name}")
    else:
        def component(p: Any) -> str:
            return f"the input carry at path {keystr(p)}" if p else "the input carry"
    if in_tree != out_tree:
        raise TypeError(
            f"{name} function carry input and carry output must have the same pytree "
            "structure, but they differ:\n\n"
            f"the input tree structure is:\n{in_tree}\n"
            f"the output tree structure is:\n{out_tree}\n\n"
            "Revise the function so that the carry output has the same pytree structure as "
            "the carry input.")
    paths = _paths(in_tree, len(in_avals))
    diffs = [f"{component(p)} has type {a.str_short()} but the corresponding output carry "
             f"component has type {b.str_short()}{mismatch_extra(a, b)}"
             for p, a, b in zip(paths, in_avals, out_avals) if not typematch(a, b)]
    if diffs:
        raise TypeError(
            f"{name} function carry input and carry output must have equal types, but they "
            f"differ:\n\n{_bullets(diffs, chr(10))}\n"
            "Revise the function so that all output types match the corresponding input "
            "types.")


def promote_weak_typed_input(value: Any, in_aval: ShapedArray, out_aval: ShapedArray
                             ) -> tuple[Any, bool]:
    """A weakly typed initial carry whose body output has another dtype is converted to it
    (JAX then traces the body again)."""
    if in_aval.weak_type and not typematch(in_aval, out_aval):
        from pyjax._src.primitives.elementwise import convert_element_type
        new_dtype = dtypes.result_type(value, out_aval.dtype)
        return convert_element_type(value, new_dtype), True
    return value, False


def avals_of(values: Sequence[Any]) -> list[ShapedArray]:
    return [abstractify(v) for v in values]
