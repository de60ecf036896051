"""The fusion plan: which equations of an optimised jaxpr run together as one kernel.

An elementwise chain over one shape (with broadcasts into that shape, converts and selects)
ending in at most one reduction becomes a `Cluster`; everything else (dot_general and other
BLAS/LAPACK calls, gather/scatter, sort, control flow, effects) stays a `Call`.  The chain that
consumes a dot_general's result is a cluster over the dot's output: the dot's epilogue.

Equations are pure, so a cluster may be evaluated later than its first member: it runs where
its last member stood, and it stops growing as soon as anything outside it reads one of its
values (so everything that reads a cluster value runs after the whole cluster).

A cheap elementwise value of a closed cluster that only later clusters over the same shape read
(float64 softmax's exp(x - max), read by the row sum and then by the division) is recomputed in
each of them instead of written and read back: a pass over memory costs more than a few
vectorised ops (float32 transcendentals, XLA's polynomials, cost more: they are stored).
Recomputed members keep their equations (the same values, bit for bit) and are listed in the
reading cluster's `recomputed`; only the cluster that owns a value ever outputs it.
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

#: members that read their operand from outside the cluster in another layout (a broadcast
#: into the cluster's shape; a transpose of the last two axes, read column by column), and
#: that alone stay NumPy views instead of a cluster of their own
VIEWS = frozenset({"broadcast_in_dim", "transpose"})

#: calls whose result an elementwise epilogue may consume (shown in the plan)
BLAS_CALLS = frozenset({"dot_general", "conv_general_dilated"})

#: elementwise ops worth recomputing, by cost per element relative to a cheap arithmetic op;
#: ops not listed are never recomputed
_RECOMPUTE_COST = {
    **dict.fromkeys(("add", "sub", "mul", "neg", "max", "min", "abs", "square", "select_n",
                     "convert_element_type", "broadcast_in_dim", "fused_multiply_add", "clamp",
                     "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not", "add_any",
                     "integer_pow"), 1),
    **dict.fromkeys(("div", "sqrt", "rsqrt"), 2)}
#: transcendentals: a few arithmetic ops each in a native kernel (libmvec's vector functions),
#: but dearer than a pass over memory as NumPy calls, so recomputed only where tier 1 runs.
#: float32 ones are XLA's own polynomials, ~25 vector operations per value: stored, not
#: recomputed (softmax over (4096, 1024): 8.3 ms recomputing exp(x - max) in the division, 6.7
#: reading it back, with freed buffers kept for reuse: host_memory.py)
_TRANSCENDENTAL_COST = dict.fromkeys(
    ("exp", "exp2", "expm1", "log", "log1p", "tanh", "logistic"), 4)
#: the most a recomputed chain may cost per element (softmax's subtract and exp cost 5)
RECOMPUTE_BUDGET = 8
_FLOAT32_TRANSCENDENTAL_COST = RECOMPUTE_BUDGET + 1


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
    # members copied from the closed cluster that owns their values, computed again here
    recomputed: set = dataclasses.field(default_factory=set)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def eqns(self) -> list[Eqn]:
        return [e for _, e in self.members]


Step = Call | Cluster


@dataclasses.dataclass
class RowGroup:
    """Consecutive clusters that work row by row over the same leading axes `rows`: a row's
    reductions (layernorm's mean and variance, softmax's max and sum), the per-row values
    computed from them, and the clusters reading those back over the row.  Tier 1 runs the
    group a few rows at a time, every cluster in turn, so a row stays in cache from its first
    cluster to its last instead of each cluster streaming the whole array from memory.

    inputs: values the members read from outside the group (first-use order); outputs: member
    values that later steps read or the program returns."""

    steps: list[Cluster]
    rows: tuple
    inputs: list[Var] = dataclasses.field(default_factory=list)
    outputs: list[Var] = dataclasses.field(default_factory=list)


def _fusible(eqn: Eqn) -> bool:
    if eqn.primitive.multiple_results or has_effects(eqn) or len(eqn.outvars) != 1:
        return False
    name = eqn.primitive.name
    if name == "convert_element_type":  # float -> int checks the whole array's range
        src, dst = eqn.invars[0].aval.dtype, eqn.outvars[0].aval.dtype
        return not (np.dtype(dst).kind in "iu" and np.dtype(src).kind not in "iub")
    if name == "bitcast_convert_type":  # elementwise when the width stays
        return eqn.invars[0].aval.shape == eqn.outvars[0].aval.shape
    if name == "transpose":
        return is_last_swap(eqn.params["permutation"])
    return name in ELEMENTWISE or name in REDUCTIONS or name == "broadcast_in_dim"


def is_last_swap(permutation: tuple) -> bool:
    """Whether a transpose's permutation swaps the last two axes and keeps the others."""
    n = len(permutation)
    return n >= 2 and tuple(permutation) == (*range(n - 2), n - 1, n - 2)


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
    recompute = _Recompute(jaxpr, owner)
    for i, eqn in enumerate(jaxpr.eqns):
        vars_in = [a for a in eqn.invars if type(a) is Var]
        fusible = _fusible(eqn)
        target = None
        copies: list[tuple[int, Eqn]] = []  # members of closed clusters recomputed here
        if fusible:
            shape = _shape_of(eqn)
            view = eqn.primitive.name in VIEWS
            joinable = []
            for a in vars_in:
                c = owner.get(a)
                # a view's operand is laid out otherwise: it must come from outside
                if (c is not None and not c.closed and c.shape == shape and not view
                        and c.reduction is None and c not in joinable):
                    joinable.append(c)
                elif c is not None and not view:
                    copies += [m for m in recompute.chain(a) if m not in copies]
            if joinable:
                target = max(joinable, key=lambda c: c.index)
                for c in joinable:  # open clusters this equation joins become one
                    if c is not target:
                        _merge(c, target, owner)
        recomputed = {e.outvars[0] for _, e in copies}
        # anything outside `target` reading a cluster value closes that cluster
        for a in vars_in:
            c = owner.get(a)
            if c is not None and c is not target and a not in recomputed:
                c.closed = True
        if not fusible:
            steps.append(Call(i, eqn))
            if eqn.primitive.name in BLAS_CALLS:
                producer_call.update((v, eqn.primitive.name) for v in eqn.outvars)
            continue
        if target is None:
            target = Cluster(i, _shape_of(eqn), [])
            steps.append(target)
        known = set(target.eqns)
        new = [m for m in copies if m[1] not in known]
        if new:
            target.members = sorted(target.members + new, key=lambda m: m[0])
            target.recomputed.update(e for _, e in new)
        target.members.append((i, eqn))
        target.index = i
        owner[eqn.outvars[0]] = target
        if eqn.primitive.name in REDUCTIONS:
            target.reduction = eqn
            target.closed = True
    steps = sorted((s for s in steps if type(s) is Call or s.members), key=lambda s: s.index)
    _fill_boundaries(jaxpr, steps, owner, producer_call)
    return steps


class _Recompute:
    """Which values of closed clusters later clusters compute again instead of reading.

    A value qualifies when the program does not return it, every equation reading it is
    fusible over its shape (so no step ever needs it from memory and its owner need not write
    it), its owner runs blockwise (tier 0's threshold: a smaller cluster's values are whole
    arrays anyway), and the members it is computed from cost at most RECOMPUTE_BUDGET per
    element (transcendentals count only where tier 1 runs) and read fewer bytes than writing
    and re-reading the value would move."""

    def __init__(self, jaxpr: Jaxpr, owner: dict) -> None:
        self.owner = owner
        self.returned = {v for v in jaxpr.outvars if type(v) is Var}
        self.readers: dict[Var, list[Eqn]] = {}
        for e in jaxpr.eqns:
            for a in e.invars:
                if type(a) is Var:
                    self.readers.setdefault(a, []).append(e)
        self.memo: dict[Var, list] = {}
        from pyjax._src.backend import tier0  # (it builds on this module)
        self.min_size = tier0.BLOCKWISE_MIN
        self._costs: dict | None = None

    @property
    def costs(self) -> dict:
        """Cost per element of each op worth recomputing (asked only for big clusters, so
        small programs never load llvmlite to learn whether tier 1 runs)."""
        if self._costs is None:
            from pyjax._src.backend import tier1
            self._costs = dict(_RECOMPUTE_COST)
            if tier1.reason() is None:
                self._costs.update(_TRANSCENDENTAL_COST)
        return self._costs

    def chain(self, value: Var) -> list[tuple[int, Eqn]]:
        """The members (index, eqn) of value's closed owner that compute it, or [] when it is
        read from memory instead."""
        if value not in self.memo:
            self.memo[value] = self._chain(value)
        return self.memo[value]

    def _chain(self, value: Var) -> list[tuple[int, Eqn]]:
        owner = self.owner[value]
        shape = tuple(value.aval.shape)
        if (not owner.closed or owner.shape != shape or owner.size < self.min_size
                or value in self.returned):
            return []
        for r in self.readers.get(value, ()):
            if not (_fusible(r) and r.primitive.name not in VIEWS
                    and _shape_of(r) == shape):
                return []
        made = {e.outvars[0]: (i, e) for i, e in owner.members if e is not owner.reduction}
        if value not in made or made[value][1].primitive.name in VIEWS:
            return []
        needed: dict[Eqn, int] = {}
        todo, reads = [value], set()
        while todo:
            i, e = made[todo.pop()]
            if e in needed:
                continue
            needed[e] = i
            for a in e.invars:
                if type(a) is Var and a in made:
                    todo.append(a)
                elif type(a) is Var:
                    reads.add(a)
        chain = sorted(((i, e) for e, i in needed.items()), key=lambda m: m[0])
        cost = 0
        for _, e in chain:
            name = e.primitive.name
            if name not in self.costs:
                return []
            xla_polynomial = (name in _TRANSCENDENTAL_COST
                              and np.dtype(e.outvars[0].aval.dtype) == np.float32)
            cost += _FLOAT32_TRANSCENDENTAL_COST if xla_polynomial else self.costs[name]
        # bytes per element: the chain's full-size reads against the value's write and read
        moved = sum(np.dtype(a.aval.dtype).itemsize for a in reads
                    if math.prod(a.aval.shape) == owner.size)
        if cost > RECOMPUTE_BUDGET or moved >= 2 * np.dtype(value.aval.dtype).itemsize:
            return []
        return chain


def _merge(source: Cluster, target: Cluster, owner: dict) -> None:
    """Move every member of the open cluster `source` into `target` (which runs later; nothing
    outside `source` has read its values, so they may be computed there)."""
    known = set(target.eqns)
    moved = [m for m in source.members if m[1] not in known]
    target.members = sorted(moved + target.members, key=lambda m: m[0])
    target.index = max(target.index, source.index)
    for _, e in moved:
        if e not in source.recomputed:  # a copy's value stays its owner's
            owner[e.outvars[0]] = target
    target.recomputed |= source.recomputed
    source.members = []


def _fill_boundaries(jaxpr: Jaxpr, steps: list[Step], owner: dict, producer_call: dict
                     ) -> None:
    """Each cluster's inputs and outputs."""
    returned = {v for v in jaxpr.outvars if type(v) is Var}
    read_outside: set = set(returned)
    for step in steps:
        eqns = [step.eqn] if type(step) is Call else step.eqns
        produced = {e.outvars[0] for e in eqns} if type(step) is Cluster else set()
        for e in eqns:
            for a in e.invars:  # (a recomputed value is produced where it is read)
                if type(a) is Var and owner.get(a) is not None and a not in produced:
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
        step.outputs = [e.outvars[0] for e in step.eqns
                        if e.outvars[0] in read_outside and e not in step.recomputed]


def group_rows(jaxpr: Jaxpr, steps: list[Step]) -> tuple[list[Step], list[RowGroup]]:
    """The steps reordered for row groups, and the groups: each starts at a cluster reducing
    trailing axes (its leading axes are the rows) and takes the clusters after it while they
    iterate over those rows and read the group's values row by row; steps between them that
    read nothing the group made (a scale vector built from an iota, a scalar convert) move
    before the group.  A group holds at least two clusters of tier 0's blockwise size (else
    there is no pass over memory to save)."""
    from pyjax._src.backend import tier0  # (it builds on this module)
    steps = list(steps)
    groups = []
    i = 0
    while i < len(steps):
        rows = _row_axes(steps[i])
        if rows is None:
            i += 1
            continue
        members = [steps[i]]
        produced = set(steps[i].outputs)
        end = i + 1  # past the last member
        for k in range(i + 1, len(steps)):
            if _joins_rows(steps[k], rows, produced):
                members.append(steps[k])
                produced.update(steps[k].outputs)
                end = k + 1
            elif any(a in produced for e in _eqns(steps[k]) for a in e.invars):
                break
        if sum(m.size >= tier0.BLOCKWISE_MIN for m in members) >= 2:
            inside = {id(m) for m in members}
            hoisted = [s for s in steps[i:end] if id(s) not in inside]
            steps[i:end] = hoisted + members
            groups.append(_group_boundaries(jaxpr, steps, members, rows))
            i = end
        else:
            i += 1
    return steps, groups


def _eqns(step: Step) -> list[Eqn]:
    return [step.eqn] if type(step) is Call else step.eqns


def _row_axes(step: Step) -> tuple | None:
    """The leading axes of a cluster reducing its trailing axes (at least two rows), else
    None."""
    if type(step) is not Cluster or step.reduction is None:
        return None
    n = len(step.shape)
    axes = sorted(step.reduction.params["axes"])
    k = n - len(axes)
    if axes != list(range(k, n)) or math.prod(step.shape[:k]) < 2:
        return None
    return tuple(step.shape[:k])


def _joins_rows(step: Step, rows: tuple, produced: set) -> bool:
    """Whether `step` is a cluster over `rows` (reducing only axes after them, no transposed
    operands) that reads the values the group produced (`produced`) row by row."""
    k = len(rows)
    if type(step) is not Cluster or tuple(step.shape[:k]) != rows:
        return False
    if step.reduction is not None:
        axes = sorted(step.reduction.params["axes"])  # (a reduction over no axes: none)
        if not axes or axes != list(range(len(step.shape) - len(axes), len(step.shape))) \
                or axes[0] < k:
            return False
    for e in step.eqns:
        if e.primitive.name == "transpose":
            return False
        read = [a for a in e.invars if type(a) is Var and a in produced]
        if not read:
            continue
        if e.primitive.name == "broadcast_in_dim":
            dims = tuple(e.params["broadcast_dimensions"])
            if dims[:k] != tuple(range(k)) or tuple(read[0].aval.shape[:k]) != rows:
                return False
        elif any(tuple(a.aval.shape[:k]) != rows for a in read):
            return False
    return True


def _group_boundaries(jaxpr: Jaxpr, steps: list[Step], members: list[Cluster], rows: tuple
                      ) -> RowGroup:
    """The group of `members` with its inputs and outputs."""
    group = RowGroup(list(members), rows)
    produced: set = set()
    for m in members:
        for a in m.inputs:
            if a not in produced and a not in group.inputs:
                group.inputs.append(a)
        produced.update(m.outputs)
    inside = {id(m) for m in members}
    read_after = {v for v in jaxpr.outvars if type(v) is Var}
    for step in steps:
        if id(step) not in inside:
            eqns = [step.eqn] if type(step) is Call else step.eqns
            read_after.update(a for e in eqns for a in e.invars if type(a) is Var)
    group.outputs = [v for m in members for v in m.outputs if v in read_after]
    return group


def describe(steps: list[Step], names: dict) -> str:
    """The plan as text: one line per cluster of more than one equation (a recomputed
    member's name is starred)."""
    lines = []
    for step in steps:
        if type(step) is not Cluster or len(step.members) < 2:
            continue
        ops = " ".join(e.primitive.name + ("*" if e in step.recomputed else "")
                       for e in step.eqns)
        ins = ", ".join(names.get(a, "lit") if type(a) is Var else "lit" for a in step.inputs)
        outs = ", ".join(names[v] for v in step.outputs)
        epilogue = f" (epilogue of {step.after})" if step.after else ""
        lines.append(f"# cluster over {step.shape}{epilogue}: ({ins}) -> ({outs}): {ops}")
    return "\n".join(lines)
