"""Which manual mesh axes each value of a shard_map body varies over (JAX's check_vma):
inputs vary over the axes their in_specs name; a primitive's `vma` rule says how its result
varies (the collectives set theirs: reductions make a value invariant along their axes,
axis_index and pvary vary); everything else varies as its operands do."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Sequence

from pyjax._src.core.jaxpr import ClosedJaxpr, Eqn, Literal, Var
from pyjax._src.core.source_info import user_frames
from pyjax._src.parallel import size_one
from pyjax._src.transforms.staging import equation_typing

def _names(axis_name: Any) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _typed(aval: Any, vma: frozenset, order: Sequence[Any]) -> str:
    return aval.update(vma=tuple(n for n in order if n in vma)).str_short()


def reduces_over(param: str, api_name: str) -> Callable:
    """The `vma` rule of a reduction over the axes its `param` names: the result is invariant
    along them; with `check`, JAX's error (worded for `jax.lax.{api_name}`) when the operand
    varies over some of them but not all."""
    def rule(union: frozenset, in_aval: Any, check: bool, order: Sequence[Any],
             **params: Any) -> frozenset:
        named = _names(params[param])
        axes = frozenset(named) - size_one.dropped_manual_axes()
        if check and (axes & union) and not axes <= union:
            raise ValueError(
                f"jax.lax.{api_name} can only accept axis_name which corresponds to one of "
                "varying, unreduced, reduced or invarying state of the input. Got input "
                f"type: {_typed(in_aval, union, order or sorted(union))}, axes: {named} and "
                "input state: {'invarying', 'varying'}")
        return union - axes
    return rule


def varies_over(param: str) -> Callable:
    """The `vma` rule of a primitive whose result varies over the axes its `param` names
    besides its operands' (axis_index, pvary)."""
    def rule(union: frozenset, in_aval: Any, check: bool, order: Sequence[Any],
             **params: Any) -> frozenset:
        return union | frozenset(_names(params[param]))
    return rule


def eqn_vma(prim: Any, params: dict, ins: Sequence[frozenset], n_out: int, in_aval: Any,
            *, check: bool, order: Sequence[Any] = ()) -> list[frozenset]:
    """The vmas of one equation's outputs given its inputs': the primitive's `vma` rule
    (`in_aval`, its first operand's type, is named in the rule's errors), a body's own walk,
    or the union of the operands'; never naming manual axes of size 1 while
    jax.remove_size_one_mesh_axis_from_type is on."""
    union = frozenset().union(*ins)
    if prim.vma is not None:
        outs = [prim.vma(union, in_aval, check, order, **params)] * n_out
    else:
        sub = params.get("jaxpr")
        if isinstance(sub, ClosedJaxpr) and len(sub.jaxpr.invars) == len(ins) \
                and prim.name != "shard_map":
            return infer_vma(sub, ins, check=check, order=order)
        outs = [union] * n_out
    dropped = size_one.dropped_manual_axes()
    return [v - dropped for v in outs] if dropped else outs


def infer_vma(closed: ClosedJaxpr, in_vmas: Sequence[frozenset], *, check: bool,
              order: Sequence[Any] = ()) -> list[frozenset]:
    """The output vmas of `closed` given its inputs' (see `eqn_vma`)."""
    env: dict = dict(zip(closed.jaxpr.invars, in_vmas))

    def read(a: Any) -> frozenset:
        return env.get(a, frozenset()) if isinstance(a, Var) else frozenset()

    for eqn in closed.jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        in_aval = eqn.invars[0].aval if eqn.invars else None
        outs = eqn_vma(eqn.primitive, eqn.params, ins, len(eqn.outvars), in_aval,
                       check=check, order=order)
        env.update(zip(eqn.outvars, outs))
    return [read(a) for a in closed.jaxpr.outvars]


def check_out_vma(mesh: Any, manual: frozenset, specs: Sequence[Any],
                  vmas: Sequence[frozenset]) -> None:
    """JAX's error when an output varies over a manual axis its out_spec does not name (JAX
    words it for its internal wrapper of the function, `_rem_singleton`, with no key path)."""
    from pyjax._src.parallel.shard_map import _spec_axes
    order = [n for n in mesh.axis_names if n in manual]
    msgs = []
    for spec, vma in zip(specs, vmas):
        named = _spec_axes(spec)
        if not vma - named:
            continue
        unmentioned = [n for n in mesh.axis_names if n not in named]
        if len(unmentioned) > 1:
            need = ",".join(str(n) for n in order if n in named)
            got = ",".join(str(n) for n in order if n in vma)
            diff = ",".join(str(n) for n in unmentioned if n in vma)
            msgs.append(f"* out_specs is {spec} which implies that the corresponding "
                        f"output value is only varying across mesh axes {{{need}}} and not "
                        f"{{{diff}}}, but it was inferred to be possibly varying over "
                        f"{{{got}}}")
        else:
            msgs.append(f"* out_specs is {spec} which implies that the corresponding "
                        f"output value is replicated across mesh axis '{unmentioned[0]}', but "
                        "could not infer replication over any axes")
    if not msgs:
        return
    if len(msgs) == 1:
        msgs = [msgs[0][2:]]
    raise ValueError(
        "shard_map applied to the function '_rem_singleton' was given out_specs which require "
        "replication which can't be statically inferred given the mesh:\n\nThe mesh given has "
        f"shape {tuple(mesh.axis_sizes)} with corresponding axis names "
        f"{tuple(mesh.axis_names)}.\n\n" + "\n\n".join(msgs) + "\n\nCheck if these output "
        "values are meant to be replicated over those mesh axes. If not, consider revising the "
        "corresponding out_specs entries. If so, consider disabling the check by passing the "
        "check_vma=False argument to `jax.shard_map`.")


# -- typing a traced body's values by their varying axes (shard_map with check_vma) ------------

def _ordered(names: frozenset, order: Sequence[Any]) -> tuple:
    return tuple(n for n in order if n in names)


def _casts_operands(prim: Any, params: dict) -> bool:
    """Whether JAX makes this primitive's operands vary alike first (pvary): ops of several
    operands and one result (lax's binary ops, select_n, dot_general, concatenate, slicing
    by traced indices, ...), not calls, control flow or collectives."""
    return not prim.multiple_results and not any(
        isinstance(v, ClosedJaxpr) for v in params.values()) and prim.name != "pvary"


def _auto_pcast() -> bool:
    """jax.auto_pcast: whether operands varying over fewer axes get an implicit pvary."""
    from pyjax._src.config import config
    return config.auto_pcast


def _type_equation(trace: Any, prim: Any, atoms: list, params: dict, out: Any, *,
                   order: tuple) -> tuple[list, Any]:
    """The staged equation's operands (pvary'd to the axes the others vary over, as JAX
    inserts it) and its results typed with the axes they vary over (eqn_vma's rules)."""
    from pyjax._src.parallel.collectives import pvary_p
    ins = [frozenset(getattr(a.aval, "vma", ())) for a in atoms]  # (tokens, refs: none)
    union = frozenset().union(*ins)
    if union and len(atoms) > 1 and _casts_operands(prim, params):
        if any(v != union for v in ins) and not _auto_pcast():
            raise ValueError(
                f"Primitive {prim.name} requires varying manual axes to match, but got "
                f"{ins}. Please open an issue at https://github.com/jax-ml/jax/issues and as "
                "a temporary workaround pass the check_vma=False argument to `jax.shard_map`")
        cast = []
        for a, v in zip(atoms, ins):
            if v != union and hasattr(a.aval, "vma"):
                var = Var(a.aval.update(vma=_ordered(union, order)))
                trace.eqns.append(Eqn(pvary_p, [a], [var],
                                      {"axes": _ordered(union - v, order)}, user_frames()))
                a = var
            cast.append(a)
        atoms, ins = cast, [union] * len(atoms)
    many = prim.multiple_results
    outs = list(out) if many else [out]
    in_aval = atoms[0].aval if atoms and type(atoms[0]) is not Literal else None
    vmas = eqn_vma(prim, params, ins, len(outs), in_aval, check=True, order=order)
    typed = [o.update(vma=_ordered(v, order)) if hasattr(o, "vma") else o
             for o, v in zip(outs, vmas)]
    return atoms, (typed if many else typed[0])


@contextlib.contextmanager
def typing(order: tuple) -> Iterator[None]:
    """Within: every staged equation's values are typed by the manual axes (of `order`, the
    mesh's order) they vary over."""
    previous = equation_typing.rule
    equation_typing.rule = lambda *args: _type_equation(*args, order=order)
    try:
        yield
    finally:
        equation_typing.rule = previous
