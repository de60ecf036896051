"""`scan` (and `map`, static-bound `fori_loop`): one primitive holding the body's closed jaxpr.

Operands are `*consts, *init, *xs`; the body maps `(consts, carry, x) -> (carry, y)` and the
primitive returns the final carry and the stacked ys.  Params as JAX prints them: jaxpr, length,
num_carry, num_consts, reverse, unroll.  The body is compiled once (the jit executor's generated
code) and the loop runs over it without re-tracing.  Rules: jvp (a carry-tangent fixpoint),
partial evaluation (known scan computing residuals, stacked per iteration unless they are loop
inputs or loop-invariant; unknown scan over the tangents), transpose (a reversed scan over the
cotangents), batching (a carry-batching fixpoint; batched xs/ys keep the loop axis first).
"""
from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.backend.dispatch import private_buffer
from pyjax._src.backend.executor import compile_jaxpr
from pyjax._src.config import config
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import (
    ClosedJaxpr, DropVar, Eqn, Jaxpr, Var, dce, jaxpr_has_effects, jaxprs_in_params)
from pyjax._src.core.primitive import Primitive
from pyjax._src.parallel import propagation
from pyjax._src.core.trace import use_trace
from pyjax._src.primitives.control_flow import common
from pyjax._src.primitives.control_flow.batch_util import ANY, batch_body, install_batch_rule
from pyjax._src.random.physical import is_key, physical_aval
from pyjax._src.transforms import ad, batching
from pyjax._src.transforms.staging import abstractify
from pyjax._src.tree_util import tree_flatten, tree_map, tree_unflatten, treedef_children

scan_p = Primitive("scan", multiple_results=True)


def _split3(xs: Sequence[Any], n1: int, n2: int) -> tuple[list, list, list]:
    return list(xs[:n1]), list(xs[n1:n1 + n2]), list(xs[n1 + n2:])


def _scan_impl(*args: np.ndarray, jaxpr: ClosedJaxpr, length: int, reverse: bool,
               num_consts: int, num_carry: int, unroll: int) -> list:
    num_ys = len(jaxpr.out_avals) - num_carry
    ys = [np.empty((length, *a.shape), a.dtype) for a in _buffer_avals(jaxpr)[num_carry:]]
    block = _map_block(jaxpr, length, num_carry, args[num_consts:])
    if block > 1:
        _map(block, ys, args[:num_consts], args[num_consts:], jaxpr)
        return ys
    loop = _loop_code(num_consts, num_carry, len(args) - num_consts - num_carry, num_ys)
    steps = range(length - 1, -1, -1) if reverse else range(length)
    carry = loop(compile_jaxpr(jaxpr).positional, steps, ys, *args)
    return [*[np.asarray(c) for c in carry], *ys]


def _buffer_avals(jaxpr: ClosedJaxpr) -> list[ShapedArray]:
    """The types of the body's output buffers (a key array's: its key data)."""
    return [physical_aval(a) if is_key(a) else a for a in jaxpr.out_avals]


#: bytes of xs and ys per block of iterations a carry-free scan runs batched (see _map_block)
MAP_BLOCK_BYTES = 1 << 22


def _map_block(jaxpr: ClosedJaxpr, length: int, num_carry: int, xs: Sequence[np.ndarray]
               ) -> int:
    """How many iterations a scan without carry (lax.map) runs at once as its body batched
    over them (1: one at a time).  Each iteration's ys depend on its own xs only, so a block
    computes the same values, with whole-array operations instead of a body call per
    iteration (JAX's random_gamma_grad maps a while loop over the elements: jit(grad) of
    random.gamma over 1000 elements took 2 s one at a time).  Bodies with effects or
    collectives keep their order and run one iteration at a time, and so do the scans that
    run inside a batched body (a sequential batching rule - custom_batching.sequential_vmap,
    pure_callback's - maps its body over the batch: batched again, it would recurse)."""
    if (num_carry or length < 2 or not jaxpr.out_avals or getattr(_mapping, "on", False)
            or _ordered(jaxpr.jaxpr)):
        return 1
    per = sum(x[0].nbytes for x in xs) + sum(
        int(np.prod(a.shape)) * np.dtype(a.dtype).itemsize for a in _buffer_avals(jaxpr))
    return max(1, min(length, MAP_BLOCK_BYTES // max(per, 1)))


_ordered_cache: "weakref.WeakKeyDictionary[Jaxpr, bool]" = weakref.WeakKeyDictionary()


def _ordered(jaxpr: Jaxpr) -> bool:
    """Whether `jaxpr` (or a body inside it) has effects or collectives (the primitives
    with a named-axis batching rule that hold no body); found once per jaxpr, not per call."""
    found = _ordered_cache.get(jaxpr)
    if found is None:
        found = _ordered_cache[jaxpr] = jaxpr_has_effects(jaxpr) or any(
            any(_ordered(sub) for sub in subs) or (
                not subs and eqn.primitive.batch_collective is not None)
            for eqn in jaxpr.eqns for subs in [list(jaxprs_in_params(eqn.params))])
    return found


#: whether this thread runs a batched map body now (its scans run one iteration at a time)
_mapping = threading.local()
#: a carry-free scan body's batched versions, by block size
_batched: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


def _map(block: int, ys: list, consts: Sequence[Any], xs: Sequence[np.ndarray],
         jaxpr: ClosedJaxpr) -> None:
    """ys[i] = body(consts, xs[i]) for every i, `block` iterations at a time."""
    length = len(ys[0])
    versions = _batched.setdefault(jaxpr, {})
    for start in range(0, length, block):
        size = min(block, length - start)
        run = versions.get(size)
        if run is None:
            dims = [None] * len(consts) + [0] * len(xs)
            batched, _ = batch_body(jaxpr, batching.Axis(size), dims, [0] * len(ys))
            run = versions[size] = compile_jaxpr(batched).positional
        _mapping.on = True
        try:
            outs = run(*consts, *[x[start:start + size] for x in xs])
        finally:
            _mapping.on = False
        for y, o in zip(ys, outs):
            y[start:start + size] = o


_loops: dict[tuple, Callable] = {}


def _loop_code(n_consts: int, n_carry: int, n_xs: int, n_ys: int) -> Callable:
    """A generated loop `loop(run, steps, ys, *consts, *init, *xs) -> carry` that calls the
    body's generated code with positional buffers: no lists or slicing per iteration."""
    key = (n_consts, n_carry, n_xs, n_ys)
    loop = _loops.get(key)
    if loop is None:
        k = [f"k{i}" for i in range(n_consts)]
        c = [f"c{i}" for i in range(n_carry)]
        x = [f"x{i}" for i in range(n_xs)]
        y = [f"y{i}" for i in range(n_ys)]
        outs = c + [f"o{i}" for i in range(n_ys)]
        lines = [f"def loop(run, steps, ys, {', '.join(k + c + x)}):".replace(", )", ")"),
                 f"    {''.join(v + ', ' for v in y)}= ys" if y else "    pass",
                 "    for i in steps:",
                 f"        {''.join(v + ', ' for v in outs)}= run("
                 f"{', '.join(k + c + [v + '[i]' for v in x])})" if outs else
                 f"        run({', '.join(k + c + [v + '[i]' for v in x])})"]
        lines += [f"        y{j}[i] = o{j}" for j in range(n_ys)]
        lines.append(f"    return [{', '.join(c)}]")
        namespace: dict = {}
        exec("\n".join(lines), namespace)
        loop = _loops[key] = namespace["loop"]
    return loop


def _scan_abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr, length: int, reverse: bool,
                        num_consts: int, num_carry: int, unroll: int) -> list[ShapedArray]:
    carry, ys = jaxpr.out_avals[:num_carry], jaxpr.out_avals[num_carry:]
    return [*carry, *[ShapedArray((length, *a.shape), a.dtype, a.weak_type) for a in ys]]


scan_p.impl = _scan_impl
scan_p.abstract_eval = _scan_abstract_eval
def _scan_sharding(eqn: Any, ins: list, sizes: dict) -> list:
    """Carries as the body types them; stacked outputs gain an unsplit leading axis."""
    n = eqn.params["num_carry"]
    outs = [propagation.typed_spec(a) for a in eqn.params["jaxpr"].out_avals]
    return outs[:n] + [None if s is None else (None, *s) for s in outs[n:]]


scan_p.sharding_rule = _scan_sharding


# ---------------------------------------------------------------------------------------------
# jvp
# ---------------------------------------------------------------------------------------------

def _rearrange(closed: ClosedJaxpr, in_groups: Sequence[int], dot_in: Sequence[int],
               out_groups: Sequence[int], dot_out: Sequence[int]) -> ClosedJaxpr:
    """(primal groups..., tangent groups...) binders interleaved as (g1, g1_dot, g2, ...)."""
    def interleave(xs: list, groups: Sequence[int], dots: Sequence[int]) -> list:
        primal_total = sum(groups)
        out, p, t = [], 0, primal_total
        for g, d in zip(groups, dots):
            out += xs[p:p + g] + xs[t:t + d]
            p, t = p + g, t + d
        return out
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, interleave(list(j.invars), in_groups, dot_in),
                             interleave(list(j.outvars), out_groups, dot_out), j.eqns,
                             j.debug_info), closed.consts)


def _scan_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: ClosedJaxpr,
              length: int, reverse: bool, num_consts: int, num_carry: int, unroll: int
              ) -> tuple[list, list]:
    num_xs = len(jaxpr.in_avals) - num_carry - num_consts
    num_ys = len(jaxpr.out_avals) - num_carry
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    const_nz, init_nz, xs_nz = _split3(nonzeros, num_consts, num_carry)
    carry_nz = init_nz
    for _ in range(1 + num_carry):
        nonzeros = const_nz + carry_nz + xs_nz
        jvp, nz_out = common.jvp_jaxpr(jaxpr, nonzeros, carry_nz + [False] * num_ys)
        if nz_out[:num_carry] == carry_nz:
            break
        carry_nz = [a or b for a, b in zip(carry_nz, nz_out[:num_carry])]
    tangents = [ad.instantiate(t) if nz else t for t, nz in zip(tangents, nonzeros)]
    consts, init, xs = _split3(primals, num_consts, num_carry)
    consts_dot, init_dot, xs_dot = [[t for t in group if type(t) is not ad.Zero]
                                    for group in _split3(tangents, num_consts, num_carry)]
    body = _rearrange(jvp, [num_consts, num_carry, num_xs],
                      [len(consts_dot), len(init_dot), len(xs_dot)],
                      [num_carry, num_ys], [len(init_dot), sum(nz_out) - len(init_dot)])
    out = scan_p.bind(*consts, *consts_dot, *init, *init_dot, *xs, *xs_dot, jaxpr=body,
                      length=length, reverse=reverse, num_consts=num_consts + len(consts_dot),
                      num_carry=num_carry + len(init_dot), unroll=unroll)
    carry, carry_dot = out[:num_carry], out[num_carry:num_carry + len(init_dot)]
    ys, ys_dot = out[num_carry + len(init_dot):num_carry + len(init_dot) + num_ys], \
        out[num_carry + len(init_dot) + num_ys:]
    primals_out = [*carry, *ys]
    dots = iter([*carry_dot, *ys_dot])
    return primals_out, [next(dots) if nz else ad.Zero.like(p)
                         for p, nz in zip(primals_out, nz_out)]


scan_p.jvp = _scan_jvp


def _scan_dce(used_outputs: list[bool], eqn: Eqn) -> Eqn | None:
    """JAX's scan DCE rule: the scan without the results nobody reads and the operands its
    body then does not read (a carry is kept while its next value is; fixpoint over the
    carries); None when nothing of it is needed and it has no effects."""
    if not any(used_outputs) and not jaxpr_has_effects(eqn.params["jaxpr"].jaxpr):
        return None
    body = eqn.params["jaxpr"]
    n_consts, n_carry = eqn.params["num_consts"], eqn.params["num_carry"]
    used_carry, used_ys = list(used_outputs[:n_carry]), list(used_outputs[n_carry:])
    for _ in range(1 + n_carry):
        pruned, used_in = dce(body.jaxpr, used_carry + used_ys, prune_equations=True)
        read = used_in[n_consts:n_consts + n_carry]
        if all(u or not r for u, r in zip(used_carry, read)):  # every carry read is kept
            break
        used_carry = [u or r for u, r in zip(used_carry, read)]
    used_in[n_consts:n_consts + n_carry] = used_carry  # a carry in for each carry out
    if all(used_in) and all(used_outputs) and len(pruned.eqns) == len(body.jaxpr.eqns) \
            and all(a is b for a, b in zip(pruned.eqns, body.jaxpr.eqns)):
        return eqn
    invars = [v for v, u in zip(pruned.invars, used_in) if u]
    new_body = ClosedJaxpr(Jaxpr(pruned.constvars, invars, pruned.outvars, pruned.eqns,
                                 pruned.debug_info), body.consts)
    params = dict(eqn.params, jaxpr=new_body, num_consts=sum(used_in[:n_consts]),
                  num_carry=sum(used_carry))
    return Eqn(eqn.primitive, [v for v, u in zip(eqn.invars, used_in) if u],
               [v for v, u in zip(eqn.outvars, used_carry + used_ys) if u], params,
               eqn.source_info)


scan_p.dce_rule = _scan_dce


# ---------------------------------------------------------------------------------------------
# partial evaluation
# ---------------------------------------------------------------------------------------------

def _drop_unused_outvars(j: Jaxpr) -> Jaxpr:
    """Equation outputs nothing reads become DropVars (`_`), as in the jaxprs JAX's
    partial evaluation builds from its tracers."""
    used = {v for v in j.outvars if type(v) is Var}
    for eqn in j.eqns:
        used.update(a for a in eqn.invars if type(a) is Var)
    if all(v in used for eqn in j.eqns for v in eqn.outvars if type(v) is Var):
        return j
    eqns = [Eqn(e.primitive, e.invars, [v if type(v) is not Var or v in used else DropVar(v.aval)
                                        for v in e.outvars], e.params, e.source_info)
            for e in j.eqns]
    return Jaxpr(j.constvars, j.invars, j.outvars, eqns, j.debug_info)


def _hoist_invariants(known: ClosedJaxpr, num_consts: int, consts: list, num_res: int
                      ) -> tuple[ClosedJaxpr, list, list[bool], list]:
    """Move the known body's loop-invariant equations (those reading only constants) out of
    the loop, as JAX does: returns the new body (its constants are the invariant values it
    still reads, in order of first use, so a constant it never reads, such as a loop-invariant
    carry moved to the constants, is dropped; outputs nothing reads dropped), those values,
    which residuals were hoisted, and the hoisted residuals."""
    known = ClosedJaxpr(_drop_unused_outvars(known.jaxpr), known.consts)
    j = known.jaxpr
    invariant = set(j.invars[:num_consts])
    hoisted_eqns = []
    for eqn in j.eqns:
        if all(type(a) is not Var or a in invariant for a in eqn.invars):
            hoisted_eqns.append(eqn)
            invariant.update(eqn.outvars)
    num_outs = len(j.outvars) - num_res
    res_out = j.outvars[num_outs:]
    which_hoisted = [type(v) is Var and v in invariant and v not in j.invars[:num_consts]
                     for v in res_out]
    hoisted_set = set(id(e) for e in hoisted_eqns)
    body_eqns = [e for e in j.eqns if id(e) not in hoisted_set]
    new_outvars = [v for v, h in zip(j.outvars, [False] * num_outs + which_hoisted) if not h]
    needed: list = []  # the invariant values the loop still reads, in order of first use
    for eqn in body_eqns:
        for a in eqn.invars:
            if type(a) is Var and a in invariant and a not in needed:
                needed.append(a)
    for v in new_outvars:
        if type(v) is Var and v in invariant and v not in needed:
            needed.append(v)
    if not hoisted_eqns and not any(which_hoisted) and needed == j.invars[:num_consts]:
        return known, consts, which_hoisted, []
    env = dict(zip(j.invars[:num_consts], consts))
    for eqn in hoisted_eqns:
        outs = eqn.primitive.bind(*(a.val if type(a) is not Var else env[a] for a in eqn.invars),
                                  **eqn.params)
        env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else (outs,)))
    body = Jaxpr([], [*needed, *j.invars[num_consts:]], new_outvars, body_eqns, j.debug_info)
    hoisted_res = [env[v] for v, h in zip(res_out, which_hoisted) if h]
    return ClosedJaxpr(body, known.consts), [env[v] for v in needed], which_hoisted, hoisted_res


def _scan_partial_eval(pe: Any, args: tuple, params: dict) -> list:
    jaxpr: ClosedJaxpr = params["jaxpr"]
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    length, reverse, unroll = params["length"], params["reverse"], params["unroll"]
    unknowns = [pe.is_unknown(a) for a in args]
    if all(unknowns):
        return pe.staging.process_primitive(scan_p, args, params)
    num_ys = len(jaxpr.out_avals) - num_carry
    const_uk, init_uk, xs_uk = _split3(unknowns, num_consts, num_carry)
    carry_uk = init_uk
    for _ in range(1 + num_carry):
        split = ad.partial_eval_jaxpr(jaxpr, const_uk + carry_uk + xs_uk,
                                          carry_uk + [False] * num_ys)
        if split[2][:num_carry] == carry_uk:
            break
        carry_uk = [a or b for a, b in zip(carry_uk, split[2][:num_carry])]
    known, staged, out_uk, res_avals, res_fwd = split
    unknowns = const_uk + carry_uk + xs_uk
    consts, init, xs = _split3(args, num_consts, num_carry)
    # residuals that are known constants or xs of the loop are passed in, not output (but not
    # NumPy arrays, which JAX's rule does not forward either)
    n_known_consts = num_consts - sum(const_uk)
    n_known_carry = num_carry - sum(carry_uk)
    res_src = list(res_fwd)
    forwarded = [f is not None and (f < num_consts or f >= num_consts + num_carry)
                 and not isinstance(args[f], np.ndarray) for f in res_src]
    num_known_outs = len(out_uk) - sum(out_uk)
    keep = [True] * num_known_outs + [not f for f in forwarded]
    known = _prune_res_outputs(known, keep)
    num_res_out = sum(not f for f in forwarded)
    known_consts = [x for x, uk in zip(consts, const_uk) if not uk]
    known, body_consts, which_hoisted, hoisted_res = _hoist_invariants(
        known, n_known_consts, known_consts, num_res_out)
    known_carry = [x for x, uk in zip(init, carry_uk) if not uk]
    known_xs = [x for x, uk in zip(xs, xs_uk) if not uk]
    with use_trace(pe.parent):
        outs = scan_p.bind(*body_consts, *known_carry, *known_xs, jaxpr=known, length=length,
                           reverse=reverse, num_consts=len(body_consts),
                           num_carry=n_known_carry, unroll=unroll) \
            if known.out_avals else []
    primal_out, ext_res = outs[:num_known_outs], outs[num_known_outs:]
    # every residual: forwarded input, hoisted value or stacked output
    ext_it, hoist_it = iter(ext_res), iter(hoisted_res)
    stacked_flags = iter(which_hoisted)
    residuals, is_ext = [], []
    for f, fw in zip(res_src, forwarded):
        if fw:
            residuals.append(args[f])
            is_ext.append(f >= num_consts + num_carry)
        elif next(stacked_flags):
            residuals.append(next(hoist_it))
            is_ext.append(False)
        else:
            residuals.append(next(ext_it))
            is_ext.append(True)
    if not any(out_uk):  # every operand known: the known scan (invariants hoisted) is all
        return primal_out
    int_res = [r for r, e in zip(residuals, is_ext) if not e]
    ext_res_all = [r for r, e in zip(residuals, is_ext) if e]
    n_res = len(residuals)
    staged = common.move_binders_to_back(
        staged, is_ext + [False] * (len(staged.in_avals) - n_res))
    uk_consts = [x for x, uk in zip(consts, const_uk) if uk]
    uk_init = [x for x, uk in zip(init, carry_uk) if uk]
    uk_xs = [x for x, uk in zip(xs, xs_uk) if uk]
    staged_outs = pe.staging.process_primitive(
        scan_p, (*int_res, *uk_consts, *uk_init, *uk_xs, *ext_res_all),
        {"jaxpr": staged, "length": length, "reverse": reverse,
         "num_consts": len(int_res) + len(uk_consts), "num_carry": len(uk_init),
         "unroll": unroll})
    known_it, staged_it = iter(primal_out), iter(staged_outs)
    return [next(staged_it) if uk else next(known_it) for uk in out_uk]


def _prune_res_outputs(known: ClosedJaxpr, keep: list[bool]) -> ClosedJaxpr:
    j = known.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, [v for v, k in zip(j.outvars, keep) if k],
                             j.eqns, j.debug_info), known.consts)


scan_p.partial_eval = _scan_partial_eval
scan_p.partial_eval_known = True  # as JAX's rule, it hoists invariants of a known scan too


# ---------------------------------------------------------------------------------------------
# transpose
# ---------------------------------------------------------------------------------------------

def _scan_transpose(cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr, length: int,
                    reverse: bool, num_consts: int, num_carry: int, unroll: int) -> list:
    linear = [ad.is_undefined(x) for x in args]
    consts_lin, init_lin, xs_lin = _split3(linear, num_consts, num_carry)
    num_ires = len(consts_lin) - sum(consts_lin)
    num_lin_xs = sum(xs_lin)
    if any(consts_lin[:num_ires]) or not all(consts_lin[num_ires:]) or \
            not all(xs_lin[:num_lin_xs]) or any(xs_lin[num_lin_xs:]):
        raise NotImplementedError("scan transpose expects [residuals, linear consts, linear "
                                  "carry, linear xs, residual xs]")
    ires = list(args[:num_ires])
    eres = list(args[num_consts + num_carry + num_lin_xs:])
    ct_carry = [ad.instantiate(c) for c in cts[:num_carry]]
    ct_ys = list(cts[num_carry:])
    # outputs whose cotangent is zero are dropped from the body (JAX's DCE does the same)
    keep_ys = [type(c) is not ad.Zero for c in ct_ys]
    body = common.prune_outputs(jaxpr, [True] * num_carry + keep_ys)
    ct_ys = [c for c, k in zip(ct_ys, keep_ys) if k]
    lin_const_avals = [a.aval for a in args[num_ires:num_consts]]
    ct_consts = [ad.zeros_like_aval(ad.tangent_aval(a)) for a in lin_const_avals]
    n_ct_consts = len(ct_consts)
    b_in = body.in_avals

    def transposed(*flat: Any) -> list:
        ires_, rest = flat[:num_ires], flat[num_ires:]
        ct_consts_, rest = rest[:n_ct_consts], rest[n_ct_consts:]
        ct_carry_, rest = rest[:num_carry], rest[num_carry:]
        ct_ys_, eres_ = rest[:len(ct_ys)], rest[len(ct_ys):]
        primals = [*ires_, *[ad.UndefinedPrimal(a) for a in b_in[num_ires:num_consts]],
                   *[ad.UndefinedPrimal(a) for a in b_in[num_consts:num_consts + num_carry]],
                   *[ad.UndefinedPrimal(a) for a in
                     b_in[num_consts + num_carry:num_consts + num_carry + num_lin_xs]],
                   *eres_]
        cts_in = ad.transpose_jaxpr(body.jaxpr, body.consts, primals, [*ct_carry_, *ct_ys_])
        c_consts = cts_in[:n_ct_consts]
        c_rest = cts_in[n_ct_consts:]
        summed = [ad.add_tangents(acc, c) for acc, c in zip(ct_consts_, c_consts)]
        return [ad.instantiate(c) for c in [*summed, *c_rest]]

    trans_avals = [*[abstractify(x) for x in ires], *[abstractify(x) for x in ct_consts],
                   *[abstractify(x) for x in ct_carry],
                   *[_slice_aval(abstractify(x)) for x in ct_ys],
                   *[_slice_aval(abstractify(x)) for x in eres]]
    trans = common.trace_flat(transposed, trans_avals)
    outs = scan_p.bind(*ires, *ct_consts, *ct_carry, *ct_ys, *eres, jaxpr=trans, length=length,
                       reverse=not reverse, num_consts=num_ires,
                       num_carry=n_ct_consts + num_carry, unroll=unroll)
    ct_c, ct_init, ct_xs = _split3(outs, n_ct_consts, num_carry)
    ct_init = [c if lin else None for c, lin in zip(ct_init, init_lin)]
    return [*[None] * num_ires, *ct_c, *ct_init, *ct_xs, *[None] * len(eres)]


def _slice_aval(aval: ShapedArray) -> ShapedArray:
    return ShapedArray(aval.shape[1:], aval.dtype, aval.weak_type)


scan_p.transpose = _scan_transpose


# ---------------------------------------------------------------------------------------------
# batching
# ---------------------------------------------------------------------------------------------

def _scan_batch(axis: batching.Axis, vals: Sequence[Any], dims: Sequence[Any], *,
                jaxpr: ClosedJaxpr, length: int, reverse: bool, num_consts: int,
                num_carry: int, unroll: int) -> tuple[list, list]:
    num_ys = len(jaxpr.out_avals) - num_carry
    batched = [d is not None for d in dims]
    const_b, init_b, xs_b = _split3(batched, num_consts, num_carry)
    carry_b = init_b
    for _ in range(1 + num_carry):
        in_dims = [0 if b else None for b in const_b + carry_b + xs_b]
        body, out_dims = batch_body(jaxpr, axis, in_dims,
                                    [0 if b else ANY for b in carry_b] + [ANY] * num_ys)
        carry_out_b = [d is not None for d in out_dims[:num_carry]]
        if carry_out_b == carry_b:
            break
        carry_b = [a or b for a, b in zip(carry_b, carry_out_b)]
    consts, init, xs = _split3(vals, num_consts, num_carry)
    c_dims, i_dims, x_dims = _split3(dims, num_consts, num_carry)
    consts = [x if d is None else batching.move_axis(x, d, 0) for x, d in zip(consts, c_dims)]
    init = [batching.broadcast_batch(x, axis.size, 0) if b and d is None else
            (batching.move_axis(x, d, 0) if b else x)
            for x, d, b in zip(init, i_dims, carry_b)]
    xs = [x if d is None else batching.move_axis(x, d, 1) for x, d in zip(xs, x_dims)]
    outs = scan_p.bind(*consts, *init, *xs, jaxpr=body, length=length, reverse=reverse,
                       num_consts=num_consts, num_carry=num_carry, unroll=unroll)
    ys_dims = [None if d is None else 1 for d in out_dims[num_carry:]]
    return outs, [0 if b else None for b in carry_b] + ys_dims


install_batch_rule(scan_p, _scan_batch, lambda params: (params["jaxpr"],))


# ---------------------------------------------------------------------------------------------
# API
# ---------------------------------------------------------------------------------------------

def _infer_length(xs_flat: list, length: Any) -> int:
    try:
        lengths = [x.shape[0] for x in xs_flat]
    except (AttributeError, IndexError) as err:
        raise ValueError("scan got value with no leading axis to scan over: " + ", ".join(
            str(x) for x in xs_flat if not np.shape(x)) + ".") from err
    if length is not None:
        try:
            length = int(length)
        except Exception:  # noqa: BLE001 - a tracer: JAX's ConcretizationTypeError
            from pyjax._src import errors
            raise errors.ConcretizationTypeError(
                length, "The `length` argument to `scan` expects a concrete `int` value. For "
                        "scan-like iteration with a dynamic length, use `while_loop` or "
                        "`fori_loop`.") from None
        if not all(length == n for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {lengths}.")
        return length
    if len(set(lengths)) > 1:
        raise ValueError("scan got values with different leading axis sizes: " +
                         ", ".join(str(n) for n in lengths) + ".")
    if not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    return lengths[0]


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool = 1, _split_transpose: bool = False
         ) -> tuple[Any, Any]:
    """Loop `f: (carry, x) -> (carry, y)` over the leading axis of `xs`, returning the final
    carry and the stacked ys; the body is traced once and staged as one `scan` equation."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    init_flat, init_tree = tree_flatten(init)
    xs_flat, xs_tree = tree_flatten(xs)
    length = _infer_length(xs_flat, length)
    if config.disable_jit:
        return _scan_in_python(f, init, xs_flat, xs_tree, length, reverse)
    x_avals = [_slice_aval(abstractify(x)) for x in xs_flat]
    in_tree = tree_flatten((init, xs))[1]

    def create(carry_avals: list) -> tuple:
        jaxpr, consts, out_tree = common.trace_body(f, in_tree, [*carry_avals, *x_avals],
                                                    "scan", (init, xs))
        children = treedef_children(out_tree) if _is_pair(out_tree) else None
        if children is None:
            raise TypeError(f"scan body output must be a pair, got "
                            f"{tree_unflatten(out_tree, jaxpr.out_avals)}.")
        return jaxpr, consts, children

    init_avals = [abstractify(x) for x in init_flat]
    jaxpr, consts, (carry_tree, ys_tree) = create(init_avals)
    num_carry = len(init_flat)
    carry_out_avals = jaxpr.out_avals[:carry_tree.num_leaves]
    if carry_tree.num_leaves != num_carry:
        common.check_carry_type("scan body", f, init_tree, init_avals, carry_tree,
                                carry_out_avals)
    promoted = [common.promote_weak_typed_input(x, a, b)
                for x, a, b in zip(init_flat, init_avals, carry_out_avals)]
    init_flat = [x for x, _ in promoted]
    if any(changed for _, changed in promoted):
        init_avals = [abstractify(x) for x in init_flat]
        jaxpr, consts, (carry_tree, ys_tree) = create(init_avals)
        carry_out_avals = jaxpr.out_avals[:num_carry]
    common.check_carry_type("scan body", f, init_tree, init_avals, carry_tree, carry_out_avals)
    if isinstance(unroll, bool):
        unroll = max(length, 1) if unroll else 1
    if int(unroll) < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    args = [*init_flat, *xs_flat]
    num_xs = len(xs_flat)
    num_ys = len(jaxpr.out_avals) - num_carry
    fwd = common.forwarding(jaxpr.jaxpr)
    carry_fwd, ext_fwd = fwd[:num_carry], fwd[num_carry:]
    move_to_const = [len(consts) + i == f_ for i, f_ in enumerate(carry_fwd)]
    new_consts: list = []
    if any(move_to_const):
        jaxpr = common.prune_outputs(jaxpr, [not m for m in move_to_const] + [True] * num_ys)
        jaxpr = common.move_binders_to_front(
            jaxpr, [False] * len(consts) + move_to_const + [False] * num_xs)
        args, new_consts = common.partition(move_to_const + [False] * num_xs, args)
        consts = [*new_consts, *consts]
        num_carry -= len(new_consts)
    ext_to_ext = [i - len(consts) if i is not None and i >= num_carry + len(consts) else None
                  for i in ext_fwd]
    jaxpr = common.prune_outputs(jaxpr, [True] * num_carry + [i is None for i in ext_to_ext])
    out = scan_p.bind(*consts, *args, jaxpr=jaxpr, length=length, reverse=bool(reverse),
                      num_consts=len(consts), num_carry=num_carry, unroll=int(unroll))
    carry_out, ys = out[:num_carry], iter(out[num_carry:])
    ys = [next(ys) if i is None else _as_array(args[i]) for i in ext_to_ext]
    out = [*carry_out, *ys]
    if any(move_to_const):
        out = common.merge(move_to_const + [False] * num_ys, out, new_consts)
    carry = tree_unflatten(carry_tree, out[:len(init_flat)])
    return carry, tree_unflatten(ys_tree, out[len(init_flat):])


def _as_array(x: Any) -> Any:
    """A forwarded NumPy input as a new Array (JAX puts it on the device): outside the
    scan it is a value of its own, a second constvar when traced."""
    return ArrayImpl(*private_buffer(x)) if type(x) is np.ndarray else x


def _is_pair(tree: Any) -> bool:
    from pyjax._src.tree_util import treedef_is_leaf
    if treedef_is_leaf(tree):
        return False
    children = treedef_children(tree)
    return len(children) == 2 and type(tree_unflatten(tree, [0] * tree.num_leaves)) is tuple


def _scan_in_python(f: Callable, init: Any, xs_flat: list, xs_tree: Any, length: int,
                    reverse: bool) -> tuple[Any, Any]:
    from pyjax._src.numpy.lax_numpy import stack
    if length == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because "
                         "the output type is unknown.")
    carry, ys = init, []
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for i in steps:
        carry, y = f(carry, tree_unflatten(xs_tree, [x[i] for x in xs_flat]))
        ys.append(y)
    if reverse:
        ys = ys[::-1]
    return carry, tree_map(lambda *y: stack(y), *ys)


def map(f: Callable, xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001
    """`f` applied to each slice of `xs` along its leading axis (a scan); with `batch_size`,
    slices are processed `batch_size` at a time through vmap."""
    from pyjax._src.primitives.shape import concatenate
    from pyjax._src.transforms.batching import vmap
    if batch_size is None:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    scan_xs, remainder_xs = _batch_and_remainder(xs, batch_size)
    g = lambda _, x: ((), vmap(f)(x))  # noqa: E731
    scan_ys = scan(g, (), scan_xs)[1] if scan_xs is not None else None
    flatten = lambda y: y.reshape(-1, *y.shape[2:])  # noqa: E731
    if scan_ys is None:
        return vmap(f)(remainder_xs)
    if remainder_xs is not None:
        remainder_ys = vmap(f)(remainder_xs)
        return tree_map(lambda y, r: concatenate([flatten(y), r], 0), scan_ys, remainder_ys)
    return tree_map(flatten, scan_ys)


def _batch_and_remainder(x: Any, batch_size: int) -> tuple[Any, Any]:
    leaves, tree = tree_flatten(x)
    if not leaves:
        return x, None
    n = leaves[0].shape[0]
    num_batches, remainder = (0, n) if batch_size == 0 else divmod(n, batch_size)
    elems = num_batches * batch_size
    if num_batches == 0:
        return None, tree_unflatten(tree, [leaf[elems:] for leaf in leaves])
    scan_leaves = tree_unflatten(tree, [leaf[:elems].reshape(num_batches, batch_size,
                                                             *leaf.shape[1:])
                                        for leaf in leaves])
    if remainder:
        return scan_leaves, tree_unflatten(tree, [leaf[elems:] for leaf in leaves])
    return scan_leaves, None
