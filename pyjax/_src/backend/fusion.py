"""The fusion plan: which equations of an optimised jaxpr run together as one kernel.

An elementwise chain over one shape (with broadcasts into that shape, converts and selects)
ending in at most one reduction becomes a `Cluster`; everything else (dot_general and other
BLAS/LAPACK calls, gather/scatter, sort, control flow, effects) stays a `Call`.  The chain that
consumes a dot_general's result is a cluster over the dot's output: the dot's epilogue.

Equations are pure, so a cluster may be evaluated later than its first member: it runs where
its last member stood, and it stops growing as soon as anything outside it reads one of its
values (so everything that reads a cluster value runs after the whole cluster).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from pyjax._src.core.jaxpr import Eqn, Jaxpr, Literal, Var, has_effects

#: one output element from the same element of each operand (rank-0 operands and lax's
#: implicit size-1 broadcasting allowed)
ELEMENTWISE = frozenset({
    "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "and",
    "or", "xor", "eq", "ne", "lt", "le", "gt", "ge", "neg", "sign", "floor", "ceil", "round",
    "is_finite", "exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos",
    "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "sqrt", "rsqrt",
    "cbrt", "abs", "not", "square", "erf", "erfc", "erf_inv", "lgamma", "digamma",
    "integer_pow", "select_n", "clamp", "convert_element_type", "fused_multiply_add",
    "add_any", "shift_left", "shift_right_logical", "shift_right_arithmetic",
    "population_count", "clz", "real", "imag", "conj", "complex"})

#: reductions that may end a cluster
REDUCTIONS = frozenset({"reduce_sum", "reduce_max", "reduce_min", "reduce_prod",
                        "reduce_and", "reduce_or"})

#: calls whose result an elementwise epilogue may consume (shown in the plan)
BLAS_CALLS = frozenset({"dot_general", "conv_general_dilated"})


@dataclasses.dataclass
class Call:
    """One equation run on its own (its impl)."""

    index: int
    eqn: Eqn


@dataclasses.dataclass
class Cluster:
    """Equations fused over one iteration shape; `reduction` (the last member) when present.

    inputs: values read from outside (vars and literals, in first-use order); outputs: member
    results read outside the cluster or returned by the program."""

    index: int  # the position (equation index) of the last member
    shape: tuple
    members: list[tuple[int, Eqn]]
    reduction: Eqn | None = None
    after: str | None = None  # the call producing one of its inputs (dot_general epilogue)
    inputs: list[Any] = dataclasses.field(default_factory=list)
    outputs: list[Var] = dataclasses.field(default_factory=list)
    closed: bool = False

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def eqns(self) -> list[Eqn]:
        return [e for _, e in self.members]


Step = Call | Cluster


def _fusible(eqn: Eqn) -> bool:
    if eqn.primitive.multiple_results or has_effects(eqn) or len(eqn.outvars) != 1:
        return False
    name = eqn.primitive.name
    if name == "convert_element_type":  # float -> int checks the whole array's range
        src, dst = eqn.invars[0].aval.dtype, eqn.outvars[0].aval.dtype
        return not (np.dtype(dst).kind in "iu" and np.dtype(src).kind not in "iub")
    return name in ELEMENTWISE or name in REDUCTIONS or name == "broadcast_in_dim"


def _shape_of(eqn: Eqn) -> tuple:
    """The iteration shape an equation would join a cluster over."""
    if eqn.primitive.name in REDUCTIONS:
        return tuple(eqn.invars[0].aval.shape)
    return tuple(eqn.outvars[0].aval.shape)


def plan(jaxpr: Jaxpr) -> list[Step]:
    """The steps of `jaxpr` in an order that respects its data flow."""
    owner: dict[Var, Cluster] = {}  # value -> open-or-closed cluster that produced it
    producer_call: dict[Var, str] = {}
    steps: list[Step] = []
    for i, eqn in enumerate(jaxpr.eqns):
        vars_in = [a for a in eqn.invars if type(a) is Var]
        fusible = _fusible(eqn)
        target = None
        if fusible:
            shape = _shape_of(eqn)
            broadcast = eqn.primitive.name == "broadcast_in_dim"
            joinable = []
            for a in vars_in:
                c = owner.get(a)
                # a broadcast's operand has another shape: it must come from outside
                if (c is not None and not c.closed and c.shape == shape and not broadcast
                        and c.reduction is None and c not in joinable):
                    joinable.append(c)
            if joinable:
                target = max(joinable, key=lambda c: c.index)
                for c in joinable:  # open clusters this equation joins become one
                    if c is not target:
                        _merge(c, target, owner)
        # anything outside `target` reading a cluster value closes that cluster
        for a in vars_in:
            c = owner.get(a)
            if c is not None and c is not target:
                c.closed = True
        if not fusible:
            steps.append(Call(i, eqn))
            if eqn.primitive.name in BLAS_CALLS:
                producer_call.update((v, eqn.primitive.name) for v in eqn.outvars)
            continue
        if target is None:
            target = Cluster(i, _shape_of(eqn), [])
            steps.append(target)
        target.members.append((i, eqn))
        target.index = i
        owner[eqn.outvars[0]] = target
        if eqn.primitive.name in REDUCTIONS:
            target.reduction = eqn
            target.closed = True
    steps = sorted((s for s in steps if type(s) is Call or s.members), key=lambda s: s.index)
    _fill_boundaries(jaxpr, steps, owner, producer_call)
    return steps


def _merge(source: Cluster, target: Cluster, owner: dict) -> None:
    """Move every member of the open cluster `source` into `target` (which runs later; nothing
    outside `source` has read its values, so they may be computed there)."""
    target.members = sorted(source.members + target.members, key=lambda m: m[0])
    target.index = max(target.index, source.index)
    for _, e in source.members:
        owner[e.outvars[0]] = target
    source.members = []


def _fill_boundaries(jaxpr: Jaxpr, steps: list[Step], owner: dict, producer_call: dict
                     ) -> None:
    """Each cluster's inputs and outputs."""
    returned = {v for v in jaxpr.outvars if type(v) is Var}
    read_outside: set = set(returned)
    for step in steps:
        eqns = [step.eqn] if type(step) is Call else step.eqns
        for e in eqns:
            for a in e.invars:
                if type(a) is Var and owner.get(a) is not None and owner[a] is not step:
                    read_outside.add(a)
    for step in steps:
        if type(step) is not Cluster:
            continue
        produced = {e.outvars[0] for e in step.eqns}
        seen: set = set()
        for e in step.eqns:
            for a in e.invars:
                if type(a) is Literal or a in produced:
                    continue
                if a not in seen:
                    seen.add(a)
                    step.inputs.append(a)
                    if step.after is None and a in producer_call:
                        step.after = producer_call[a]
        step.outputs = [e.outvars[0] for e in step.eqns if e.outvars[0] in read_outside]


def describe(steps: list[Step], names: dict) -> str:
    """The plan as text: one line per cluster of more than one equation."""
    lines = []
    for step in steps:
        if type(step) is not Cluster or len(step.members) < 2:
            continue
        ops = " ".join(e.primitive.name for e in step.eqns)
        ins = ", ".join(names.get(a, "lit") if type(a) is Var else "lit" for a in step.inputs)
        outs = ", ".join(names[v] for v in step.outputs)
        epilogue = f" (epilogue of {step.after})" if step.after else ""
        lines.append(f"# cluster over {step.shape}{epilogue}: ({ins}) -> ({outs}): {ops}")
    return "\n".join(lines)
