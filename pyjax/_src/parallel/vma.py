"""Which manual mesh axes each value of a shard_map body varies over (JAX's check_vma):
inputs vary over the axes their in_specs name, reductions over an axis make a value
invariant along it, axis_index varies, everything else varies as its operands do."""
from __future__ import annotations

from typing import Any, Sequence

from pyjax._src.core.jaxpr import ClosedJaxpr, Var

_REDUCTIONS = ("psum", "pmax", "pmin")


def _names(axis_name: Any) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _typed(aval: Any, vma: frozenset, order: Sequence[Any]) -> str:
    names = [n for n in order if n in vma]
    if not names:
        return aval.str_short()
    shown = names[0] if len(names) == 1 else "(" + ",".join(map(str, names)) + ")"
    return f"{aval.str_short()}{{V:{shown}}}"


def eqn_vma(name: str, params: dict, ins: Sequence[frozenset], n_out: int, in_aval: Any,
            *, check: bool, order: Sequence[Any] = ()) -> list[frozenset]:
    """The vmas of one equation's outputs given its inputs' (`in_aval`: its first operand's
    type, named in the error); with `check`, JAX's error for a reduction over axes some but
    not all of which its operand varies over."""
    union = frozenset().union(*ins)
    sub = params.get("jaxpr")
    if name in _REDUCTIONS:
        axes = frozenset(_names(params["axis_name"]))
        if check and (axes & union) and not axes <= union:
            raise ValueError(
                f"jax.lax.{name} can only accept axis_name which corresponds to one of "
                "varying, unreduced, reduced or invarying state of the input. Got input "
                f"type: {_typed(in_aval, union, order or sorted(union))}, "
                f"axes: {_names(params['axis_name'])} and input state: "
                "{'invarying', 'varying'}")
        return [union - axes] * n_out
    if name == "axis_index":
        return [union | frozenset(_names(params["axis_name"]))] * n_out
    if isinstance(sub, ClosedJaxpr) and len(sub.jaxpr.invars) == len(ins) \
            and name != "shard_map":
        return infer_vma(sub, ins, check=check, order=order)
    return [union] * n_out


def infer_vma(closed: ClosedJaxpr, in_vmas: Sequence[frozenset], *, check: bool,
              order: Sequence[Any] = ()) -> list[frozenset]:
    """The output vmas of `closed` given its inputs' (see `eqn_vma`)."""
    env: dict = dict(zip(closed.jaxpr.invars, in_vmas))

    def read(a: Any) -> frozenset:
        return env.get(a, frozenset()) if isinstance(a, Var) else frozenset()

    for eqn in closed.jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        in_aval = eqn.invars[0].aval if eqn.invars else None
        outs = eqn_vma(eqn.primitive.name, eqn.params, ins, len(eqn.outvars), in_aval,
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
