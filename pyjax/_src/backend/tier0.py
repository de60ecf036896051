"""Tier 0: the fusion plan as generated Python over NumPy.

Each call is one line `v7_0 = g3(v2_0, v5_0, **g4)` of a generated `run` function (constants
and literals are globals of that function).  A cluster over a large shape becomes its own
generated function that walks the shape block by block: the same impls run on each block
(ufunc impls write into reused block buffers with `out=`), so temporaries stay in cache and
only the cluster's outputs are full-size; results are bit-identical to calling each impl on
the whole arrays.  A reduction over axis 0 (or over everything) keeps its operand whole and
reduces it after the loop, so its summation order is unchanged.
"""
from __future__ import annotations

import dataclasses
import math
import os
from typing import Any, Callable

import numpy as np

from pyjax._src.backend import fusion, host_memory, specialized
from pyjax._src.backend.dispatch import to_buffer
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr, Literal, Var
from pyjax._src.primitives import _blas_threads

#: clusters at least this large (elements) get their own function (blockwise, and a candidate
#: for a tier 1 kernel); PYJAX_TIER1=force (a test switch) gives every cluster one
BLOCKWISE_MIN = 1 if os.environ.get("PYJAX_TIER1", "").strip().lower() == "force" else 1 << 15
#: elements per block
BLOCK = 1 << 14
#: dtypes whose ufunc loops write through `out=` exactly as they return
_NATIVE = frozenset(np.dtype(t) for t in (
    np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
    np.uint32, np.uint64, np.complex64, np.complex128))


@dataclasses.dataclass
class Program:
    """What tier 0 generated: the callable, its source, and the blockwise clusters (by the
    global name the run function calls them through, so a faster kernel can replace one)."""

    run: Callable
    source: str
    namespace: dict
    clusters: dict[str, fusion.Cluster]
    names: dict
    # row groups (fusion.group_rows), by the name of the function running their steps
    groups: dict[str, fusion.RowGroup] = dataclasses.field(default_factory=dict)


def blockwise(cluster: fusion.Cluster) -> bool:
    """Whether `cluster` gets its own function (large enough; broadcasts stay views).
    Tier 1 may replace that function; a lone equation's tier 0 function is just its call."""
    if cluster.size < BLOCKWISE_MIN:
        return False
    # broadcasts and transposes alone (or only reduced) stay NumPy views: a reduction folds
    # broadcast axes
    return any(e.primitive.name not in fusion.VIEWS and e is not cluster.reduction
               for e in cluster.eqns) or (
        len(cluster.members) == 1 and cluster.reduction is not None)


def _flat(cluster: fusion.Cluster) -> bool:
    """Whether the cluster may walk its shape as one flat run of elements."""
    shape, n = cluster.shape, cluster.size
    red = cluster.reduction
    if red is not None and set(red.params["axes"]) != set(range(len(shape))):
        return False
    for e in cluster.eqns:
        if e.primitive.name == "transpose":  # its blocks are strided views of whole rows
            return False
        if e.primitive.name == "broadcast_in_dim":
            x = e.invars[0]
            dims = tuple(e.params["broadcast_dimensions"])
            if not (x.aval.size == 1 or (x.aval.size == n and dims == tuple(sorted(dims)))):
                return False
    for a in cluster.inputs:
        if a.aval.shape not in ((), shape) and not _only_broadcast_operand(cluster, a):
            return False
    return True


def _only_broadcast_operand(cluster: fusion.Cluster, a: Any) -> bool:
    return all(e.primitive.name == "broadcast_in_dim" for e in cluster.eqns if a in e.invars)


def _blocks(cluster: fusion.Cluster) -> tuple[bool, int]:
    """(flat, block length along the walked axis)."""
    if _flat(cluster):
        return True, BLOCK
    row = math.prod(cluster.shape[1:]) or 1
    return False, max(1, BLOCK // row)


def _ufunc_out(eqn: Any) -> bool:
    """Whether eqn's impl is a plain ufunc whose `out=` result equals its returned one."""
    impl = eqn.primitive.impl
    if not isinstance(impl, np.ufunc) or impl.nout != 1 or eqn.params:
        return False
    dtype = np.dtype(eqn.outvars[0].aval.dtype)
    return dtype in _NATIVE and all(np.dtype(a.aval.dtype) == dtype for a in eqn.invars)


class _Source:
    """Globals of the generated module, shared by run and the cluster functions."""

    def __init__(self) -> None:
        # the module name puts NumPy's RuntimeWarnings from generated code under pyjax's
        # filter (JAX computes inf - inf or log(-1) silently)
        self.namespace: dict[str, Any] = {"__name__": "pyjax._src.backend.executor.generated",
                                          "empty": host_memory.empty,
                                          "defer": _blas_threads.defer, **specialized.NAMESPACE}

    def bind(self, value: Any) -> str:
        name = f"g{len(self.namespace)}"
        self.namespace[name] = value
        return name

    def literal(self, atom: Literal) -> str:
        return self.bind(np.asarray(atom.val, atom.aval.dtype))


def generate(closed: ClosedJaxpr, steps: list[fusion.Step] | None = None) -> Program:
    """Tier 0 code for `closed` following the plan `steps` (planned here when None)."""
    jaxpr = closed.jaxpr
    if steps is None:
        steps = fusion.plan(jaxpr)
    src = _Source()
    names: dict[Any, str] = {}

    def ref(atom: Any) -> str:
        return src.literal(atom) if type(atom) is Literal else names[atom]

    for var, value in zip(jaxpr.constvars, closed.consts):
        names[var] = src.bind(to_buffer(value)[0])
    args = [f"a{i}" for i in range(len(jaxpr.invars))]
    names.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        if eqn.primitive.lowering is not None:  # compile-time work (inspect_array_sharding)
            eqn.primitive.lowering(eqn)
    steps, row_groups = fusion.group_rows(jaxpr, steps)
    last_use = _last_uses(jaxpr, steps)
    specials = _specials(steps)
    arrays = {a for e in specials for a in e.invars if type(a) is Var}  # must be ndarrays
    lines = [f"def run({', '.join(args)}):"]
    for var, arg in zip(jaxpr.invars, args):  # (a caller may pass a NumPy scalar)
        if var in arrays and not var.aval.shape:
            lines += _checks([arg], [var], src)
    clusters: dict[str, fusion.Cluster] = {}
    functions: list[str] = []
    groups: dict[str, fusion.RowGroup] = {}
    group_at = {id(g.steps[0]): g for g in row_groups}
    inside = {id(s) for g in group_at.values() for s in g.steps}
    helped, moved = _helped_products(steps, specials, row_groups)
    joins: dict[int, list] = {}  # step -> lines before it: helped products' joins, moved views
    dead: list = []

    def step_lines(step: fusion.Step) -> list[str]:
        """The lines running one step (a blockwise cluster's function is generated too)."""
        if type(step) is fusion.Cluster and blockwise(step):
            if not step.outputs:  # (one whose values nothing reads is dead, and pure: not run)
                return []
            fname = f"cluster{len(clusters)}"
            clusters[fname] = step
            outs = [f"v{step.members[0][0]}_{fname}_{j}" for j in range(len(step.outputs))]
            names.update(zip(step.outputs, outs))
            functions.append(_cluster_source(fname, step, src))
            call = f"{fname}({', '.join(ref(a) for a in step.inputs)})"
            ops = " ".join(e.primitive.name for e in step.eqns)
            out = [f"    {', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}  # {ops}"]
            read = [(o, v) for o, v in zip(outs, step.outputs) if v in arrays]
            if read:  # (a rank-0 result may be a NumPy scalar)
                out += _checks([o for o, _ in read], [v for _, v in read], src)
            return out
        out = []
        members = [(step.index, step.eqn)] if type(step) is fusion.Call else step.members
        for i, eqn in members:
            out += _eqn_lines(i, eqn, names, ref, src, specials.get(eqn), arrays)
        return out

    def join(k: int) -> None:
        """The joins and moved views due before step k (len(steps): before returning)."""
        nonlocal dead
        for v, view in joins.pop(k, ()):
            if view is None:
                lines.extend(_join_lines(names[v], v, arrays, src))
            else:
                lines.extend(step_lines(steps[view]))
                dead += [names[u] for u in last_use.get(view, ()) if u in names]

    for k, step in enumerate(steps):
        join(k)
        group = group_at.get(id(step))
        if k in moved:  # (its line, and the values it reads last, go where it is needed)
            joins.setdefault(moved[k], []).append((None, k))
            continue
        if k in helped:
            lines += _helped_lines(step, names, ref, src, specials[step.eqn])
            joins.setdefault(helped[k], []).append((step.eqn.outvars[0], None))
            visible = None
        elif group is not None:  # its steps run in a function of their own (tier 1's to replace)
            gname = f"group{len(groups)}"
            groups[gname] = group
            params = [ref(a) for a in group.inputs]
            body = [line for s in group.steps for line in step_lines(s)]
            outs = [names[v] for v in group.outputs]
            result = f"{', '.join(outs)}{',' if len(outs) == 1 else ''}"
            functions.append("\n".join([f"def {gname}({', '.join(params)}):", *body,
                                         f"    return {result}"]))
            lines.append(f"    {result} = {gname}({', '.join(params)})  # row group")
            visible = set(params) | set(outs)
        elif id(step) not in inside:
            lines += step_lines(step)
            visible = None
        dead += [names[v] for v in last_use.get(k, ()) if v in names
                 and (visible is None or names[v] in visible)]
        if dead and (k + 1 == len(steps) or id(steps[k + 1]) not in inside):
            # free temporaries at once: big buffers then recycle instead of page-faulting
            lines.append(f"    del {', '.join(dead)}")
            dead = []
    join(len(steps))
    lines.append(f"    return [{', '.join(ref(v) for v in jaxpr.outvars)}]")
    source = "\n".join(lines)
    plan_text = fusion.describe(steps, names)
    full = "\n\n".join([source, *functions] + ([plan_text] if plan_text else []))
    exec(compile(full, f"<jaxpr {id(jaxpr):x}>", "exec"), src.namespace)
    return Program(src.namespace["run"], full, src.namespace, clusters, names, groups)


#: primitives whose steps make views: a helped product's result read only through a chain of
#: them waits for its first real reader (the chain moves there)
_VIEWS = frozenset({"transpose", "reshape", "squeeze", "expand_dims", "broadcast_in_dim"})


def _helped_products(steps: list[fusion.Step], specials: dict,
                     row_groups: list) -> tuple[dict, dict]:
    """The products the run function starts on a helper thread (_blas_threads.defer): products
    worth a helper (their plan's `concurrent`) with another product before the first step that
    reads their result (a grad step's weight gradient beside the gradient sent down to the
    layer below), a chain of views of the result (its transpose) not counting as a reader.
    Returns ({product's step: the step before which the run function waits for it, len(steps)
    for before returning}, {each view step of such a chain: that same step})."""
    at = {id(s): k for k, s in enumerate(steps)}
    runs_at = list(range(len(steps)))  # where each step's line is: a row group's first step
    for group in row_groups:
        for s in group.steps:
            runs_at[at[id(s)]] = at[id(group.steps[0])]
    products = [k for k, s in enumerate(steps)
                if type(s) is fusion.Call and getattr(specials.get(s.eqn), "blas", False)]
    readers: dict[Var, list[int]] = {}
    for k, step in enumerate(steps):
        for a in dict.fromkeys(_reads(step)):
            if type(a) is Var:
                readers.setdefault(a, []).append(k)
    helped, moved = {}, {}
    for k in products:
        if not (specials[steps[k].eqn].concurrent and runs_at[k] == k):
            continue
        value, chain = steps[k].eqn.outvars[0], []
        while len(readers.get(value, ())) == 1 and runs_at[j := readers[value][0]] == j and (
                after := _view_of(steps[j], value)) is not None:
            chain.append(j)
            value = after
        first = runs_at[readers[value][0]] if value in readers else len(steps)
        if any(k < j < first for j in products):
            helped[k] = first
            moved.update(dict.fromkeys(chain, first))
    return helped, moved


def _view_of(step: fusion.Step, value: Var) -> Var | None:
    """The one value `step` makes, when it makes it from `value` alone by views (_VIEWS)."""
    if type(step) is fusion.Call:
        eqns, outs = [step.eqn], step.eqn.outvars
    elif not blockwise(step):
        eqns, outs = step.eqns, step.outputs
    else:
        return None
    if len(outs) != 1 or any(e.primitive.name not in _VIEWS for e in eqns):
        return None
    return outs[0] if [a for a in _reads(step) if type(a) is Var] == [value] else None


def _helped_lines(step: fusion.Call, names: dict, ref: Callable, src: _Source,
                  special: Any) -> list[str]:
    """The line starting a product on a helper thread: its name holds a Pending until joined."""
    out = names[step.eqn.outvars[0]] = f"v{step.index}_0"
    args = ", ".join([src.bind(special), *(ref(a) for a in step.eqn.invars)])
    return [f"    {out} = defer({args})  # dot_general, on a helper"]


def _join_lines(name: str, var: Var, arrays: set, src: _Source) -> list[str]:
    """The lines taking a helped product's result (then checked, if a specialised impl reads
    it)."""
    return [f"    {name} = {name}.result()"] + (_checks([name], [var], src) if var in arrays
                                                  else [])


def _specials(steps: list[fusion.Step]) -> dict:
    """The specialised impl (specialized.py) of each equation the run function calls itself
    (not in a blockwise cluster), where its primitive gives one for the equation's types."""
    out = {}
    for step in steps:
        if type(step) is fusion.Cluster and blockwise(step):
            continue
        for eqn in [step.eqn] if type(step) is fusion.Call else step.eqns:
            specialize = getattr(eqn.primitive, "specialize", None)  # (hijax types: none)
            if specialize is not None and all(
                    type(v.aval) is ShapedArray and isinstance(v.aval.dtype, np.dtype)
                    for v in (*eqn.invars, *eqn.outvars)):
                special = specialize(*(a.aval for a in eqn.invars), **eqn.params)
                if special:
                    out[eqn] = special
    return out


def _checks(refs: list[str], values: list, src: _Source) -> list[str]:
    """Lines making each of `refs` an ndarray of its value's dtype (a specialised impl reads
    it; the step before may give a NumPy scalar or another dtype)."""
    for r, v in zip(refs, values):
        src.namespace[f"D_{r}"] = np.dtype(v.aval.dtype)
    return specialized.checks(refs)


def _eqn_lines(i: int, eqn: Any, names: dict, ref: Callable, src: _Source, special: Any,
               arrays: set) -> list[str]:
    """The run function's lines for one equation: its impl's call, or its specialised impl's
    (`special`), then checks of the results a specialised impl reads."""
    outs = [f"v{i}_{j}" for j in range(len(eqn.outvars))]
    names.update(zip(eqn.outvars, outs))
    call_args = [ref(a) for a in eqn.invars]
    checked = [(o, v) for o, v in zip(outs, eqn.outvars) if v in arrays]
    if special:
        if getattr(special, "exact", False):
            checked = []
        lines = specialized.Step(src.bind(special), special, call_args, outs,
                                 eqn.primitive.multiple_results, []).source(src.namespace)
    else:
        impl = src.bind(eqn.primitive.impl)
        if eqn.params:
            call_args.append("**" + src.bind(eqn.params))
        call = f"{impl}({', '.join(call_args)})"
        if eqn.primitive.multiple_results:
            lines = [f"    {', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}"
                     if outs else f"    {call}"]
        else:
            lines = [f"    {outs[0]} = {call}"]
    lines[0] += f"  # {eqn.primitive.name}"
    return lines + _checks([o for o, _ in checked], [v for _, v in checked], src)


def _cluster_source(fname: str, cluster: fusion.Cluster, src: _Source) -> str:
    """A function of the cluster's inputs walking its shape in blocks."""
    if len(cluster.members) == 1:
        e = cluster.eqns[0]
        args = [f"i{cluster.inputs.index(a)}" if type(a) is Var else src.literal(a)
                for a in e.invars]
        params = [f"**{src.bind(e.params)}"] if e.params else []
        return (f"def {fname}({', '.join(f'i{j}' for j in range(len(cluster.inputs)))}):\n"
                f"    return {src.bind(e.primitive.impl)}({', '.join(args + params)}),")
    flat, block = _blocks(cluster)
    shape, red = cluster.shape, cluster.reduction
    extent = cluster.size if flat else shape[0]
    params = [f"i{j}" for j in range(len(cluster.inputs))]
    local: dict[Any, str] = dict(zip(cluster.inputs, params))
    head = [f"def {fname}({', '.join(params)}):"]
    body: list[str] = []
    full_shape = (extent,) if flat else shape
    if flat:
        for a, p in zip(cluster.inputs, params):
            if a.aval.shape == shape and len(shape) != 1:
                head.append(f"    {p} = {p}.reshape(-1)")
    escaping = set(cluster.outputs)
    reduce_whole = red is not None and (flat or 0 in red.params["axes"])
    buffers: dict[Var, str] = {}  # full-size buffers written block by block
    for j, v in enumerate(cluster.outputs):
        if v is red.outvars[0] if red is not None else False:
            continue
        buffers[v] = f"o{j}"
        head.append(f"    o{j} = empty({full_shape}, {src.bind(np.dtype(v.aval.dtype))})")
    if reduce_whole and red.invars[0] not in buffers:
        buffers[red.invars[0]] = "w"
        head.append(f"    w = empty({full_shape}, {src.bind(np.dtype(red.invars[0].aval.dtype))})")
    block_shape = (block,) if flat else (block, *shape[1:])
    slots: list[tuple[np.dtype, str]] = []  # (dtype, name) of block buffers
    free: list[int] = []
    refs: dict[Var, set] = {}  # value -> slots it may view
    last = {}
    for pos, e in enumerate(cluster.eqns):
        for a in e.invars:
            if type(a) is Var:
                last[a] = pos

    def operand(a: Any) -> str:
        if type(a) is Literal:
            return src.literal(a)
        if a in local:
            if a in cluster.inputs:
                if a.aval.shape == () or (not flat and (a.aval.shape[0] != shape[0]
                                                        or len(a.aval.shape) != len(shape))):
                    return local[a]
                return f"{local[a]}[lo:hi]"
            return local[a]
        raise KeyError(a)

    for pos, e in enumerate(cluster.eqns):
        name = e.primitive.name
        out = e.outvars[0]
        tmp = f"t{pos}"
        if e is red:
            call = f"{src.bind(e.primitive.impl)}({operand(e.invars[0])}, **{src.bind(e.params)})"
            if not reduce_whole:
                body.append(f"        r[lo:hi] = {call}  # {name}")
            local[out] = "r"
            continue
        if name == "broadcast_in_dim":
            body.append(f"        {tmp} = {_broadcast_block(e, flat, shape, local, src)}"
                        f"  # {name}")
            refs[out] = set()
            if out in buffers:
                body.append(f"        {buffers[out]}[lo:hi] = {tmp}")
        elif name == "transpose":  # (never flat) the block of the operand's transposed view
            body.append(f"        {tmp} = {src.bind(e.primitive.impl)}({local[e.invars[0]]}, "
                        f"**{src.bind(e.params)})[lo:hi]  # {name}")
            refs[out] = set()
            if out in buffers:
                body.append(f"        {buffers[out]}[lo:hi] = {tmp}")
        elif _ufunc_out(e):
            dtype = np.dtype(out.aval.dtype)
            if out in buffers:
                target, used = f"{buffers[out]}[lo:hi]", set()
            else:
                slot = next((s for s in free if slots[s][0] == dtype), None)
                if slot is None:
                    slot = len(slots)
                    slots.append((dtype, f"s{slot}"))
                    head.append(f"    s{slot} = empty({block_shape}, {src.bind(dtype)})")
                else:
                    free.remove(slot)
                target, used = f"s{slot}[:n]", {slot}
            args = ", ".join(operand(a) for a in e.invars)
            body.append(f"        {tmp} = {src.bind(e.primitive.impl)}({args}, out={target})"
                        f"  # {name}")
            refs[out] = used
        else:
            args = [operand(a) for a in e.invars]
            if e.params:
                args.append("**" + src.bind(e.params))
            body.append(f"        {tmp} = {src.bind(e.primitive.impl)}({', '.join(args)})"
                        f"  # {name}")
            # the result may be a view of any operand's block buffer
            refs[out] = set().union(*(refs.get(a, set()) for a in e.invars if type(a) is Var))
            if out in buffers:
                body.append(f"        {buffers[out]}[lo:hi] = {tmp}")
        local[out] = tmp
        # block buffers no live value may still view become free
        live = {v for v, p in last.items() if p > pos and v in refs}
        live.add(out)
        held = set().union(*(refs[v] for v in live)) if live else set()
        for v, p in last.items():
            if p == pos and v in refs:
                for s in refs[v]:
                    if s not in held and s not in free:
                        free.append(s)
    if red is not None:
        out_dtype = src.bind(np.dtype(red.outvars[0].aval.dtype))
        if not reduce_whole:
            head.append(f"    r = empty({tuple(red.outvars[0].aval.shape)}, {out_dtype})")
    loop = [f"    for lo in range(0, {extent}, {block}):",
            f"        hi = lo + {block}",
            f"        n = min({block}, {extent} - lo)"]
    tail = []
    if reduce_whole:
        whole = buffers[red.invars[0]]
        whole = f"{whole}.reshape({shape})" if flat else whole
        tail.append(f"    r = {src.bind(red.primitive.impl)}({whole}, **{src.bind(red.params)})")
    results = []
    for v in cluster.outputs:
        if red is not None and v is red.outvars[0]:
            results.append("r")
        elif flat and len(shape) != 1:
            results.append(f"{buffers[v]}.reshape({shape})")
        else:
            results.append(buffers[v])
    tail.append(f"    return {', '.join(results)}{',' if len(results) == 1 else ''}")
    return "\n".join(head + loop + body + tail)


def _broadcast_block(e: Any, flat: bool, shape: tuple, local: dict, src: _Source) -> str:
    """The block of a broadcast_in_dim whose operand comes from outside the cluster."""
    x = e.invars[0]
    name = src.literal(x) if type(x) is Literal else local[x]
    dims = tuple(e.params["broadcast_dimensions"])
    impl = src.bind(e.primitive.impl)
    if flat:
        if x.aval.size == math.prod(shape) and x.aval.size != 1:
            return f"{name}.reshape(-1)[lo:hi]"
        return f"{impl}({name}.reshape(()), shape=(n,), broadcast_dimensions=())"
    index = []
    for d, size in zip(dims, x.aval.shape):
        index.append("lo:hi" if d == 0 and size == shape[0] and size != 1 else ":")
    sliced = f"{name}[{', '.join(index)}]" if "lo:hi" in index else name
    params = {k: v for k, v in e.params.items() if k != "shape"}
    return f"{impl}({sliced}, shape=(n, *{shape[1:]}), **{src.bind(params)})"


def _reads(step: fusion.Step) -> list:
    """The run-level values (and literals) a step reads."""
    if type(step) is fusion.Call:
        return step.eqn.invars
    return step.inputs if blockwise(step) else [a for e in step.eqns for a in e.invars]


def _last_uses(jaxpr: Any, steps: list[fusion.Step]) -> dict[int, list]:
    """For each step, the run-level values read there for the last time (not outputs)."""
    keep = {v for v in jaxpr.outvars if type(v) is not Literal}
    last: dict[Any, int] = {}
    for k, step in enumerate(steps):
        for a in _reads(step):
            if type(a) is not Literal:
                last[a] = k
    by_step: dict[int, list] = {}
    for var, k in last.items():
        if var not in keep and var not in jaxpr.constvars:
            by_step.setdefault(k, []).append(var)
    return by_step
