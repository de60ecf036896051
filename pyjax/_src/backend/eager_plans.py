"""Eager plans: what an eager jnp call does, worked out once per operand type.

A jnp function called eagerly checks its arguments, promotes dtypes, normalises axes and binds
a few primitives.  For one signature (operand shapes, dtypes and weak types, static arguments,
trace-affecting config, the mesh context) all of that has one outcome, so it need not be repeated:

1. the first call with a signature runs as usual;
2. the second runs under a `Recorder`, a trace whose tracers carry their values: each
   primitive is evaluated eagerly, as usual, and noted (impl, params, operands);
3. the notes become straight-line Python that calls the impls on the buffers, which every
   later call runs: one impl call per primitive, and only the results become Arrays.

A primitive's `specialize` rule may give the impl for its operand types with the params bound,
which the plan calls instead (specialized.py: what such an impl promises, and the lines that
call it, shared with tier 0); a reduction's `keepdims` impl replaces it and the reshape after
it when the plan's next step only reshapes the result to that shape (jnp's keepdims=True).

The operands are tracers while recording, so the function runs as it runs under jit: a plan
computes what jit would, and a function that needs an operand's value (or binds a primitive
with effects or its own eager rule, or warns) raises or is refused and stays unplanned.

Plans serve the jnp functions decorated with `planned` (or `util.staged_as_jit`) and the
Array operators with a Python number (`scalar_operator`: `x > 0` is keyed by the number too).
"""
from __future__ import annotations

import functools
import inspect
import keyword
import math
from types import FunctionType
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src import caches
from pyjax._src.backend.dispatch import (
    apply_primitive, apply_primitive_cached, aval_of, to_buffer)
from pyjax._src.backend.fp_mode import KEPT, SWITCHED, flush_off, flush_on, run_flushing
from pyjax._src.config import config, config_local
from pyjax._src.core import array as array_lib, primitive
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.trace import Trace, Tracer, trace_state
from pyjax._src.backend.specialized import NAMESPACE, Step
from pyjax._src.parallel.mesh import context_key as mesh_context_key

#: eager rules that amount to "check types, run the impl on the buffers, wrap the result"
_PLAIN_EAGER: set = {apply_primitive, apply_primitive_cached}


def plain_eager(rule: Callable) -> Callable:
    """Declare an eager rule equivalent to its primitive's impl on the operands' buffers (the
    result's dtype and weak type aside), so a plan may call the impl directly."""
    _PLAIN_EAGER.add(rule)
    return rule


class _Unplannable(Exception):
    """The call being recorded cannot be replayed; it runs again as usual."""


class PlanTracer(Tracer):
    """An operand, or a result computed from operands, while a call is recorded: its value
    is known (`val`) but, as under jit, the function may not use it."""

    __slots__ = ("val", "ref")
    tracer_name = "PlanTracer"

    def __init__(self, trace: "Recorder", val: ArrayImpl, ref: str):
        self._trace, self.val, self.ref = trace, val, ref

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.val._buf.shape, self.val._buf.dtype, self.val._weak)


class Recorder(Trace):
    """The trace of a recorded call: evaluates each primitive eagerly and writes it down as a
    line of Python over names a0.. (operands), C0.. (constants) and r0.. (results)."""

    #: code that runs differently when eager (custom derivatives, staged_as_jit) runs as it
    #: does eagerly: a plan replays what an eager call does
    eager_like = True

    def __init__(self) -> None:
        self.steps: list[Step] = []
        # (`__name__`: NumPy's warnings from a plan's line are pyjax's, which pyjax filters)
        self.namespace: dict = {"__name__": __name__, "ArrayImpl": ArrayImpl,
                                "new": object.__new__, "array_lib": array_lib, **NAMESPACE}
        self.const_ref: dict[int, str] = {}  # id of a constant operand -> its name
        self.keep: list = []  # keeps constants alive, so their ids stay unique
        self.n_steps = 0
        self.n_results = 0
        self.held = 0  # bytes of the constants the plan would keep alive
        self.refused = False

    def side_effect(self) -> None:
        self.refused = True

    def process_primitive(self, prim: Any, args: tuple, params: dict) -> Any:
        eager = prim.eager
        if eager not in _PLAIN_EAGER or prim.effectful or prim.impl is None:
            raise _Unplannable
        traced = [type(a) is PlanTracer for a in args]
        if any(t and a._trace is not self for a, t in zip(args, traced)):
            raise _Unplannable  # a tracer of another recording
        values = [a.val if t else a for a, t in zip(args, traced)]
        trace_state.trace = None  # the eager rule runs as in eager mode (constants, such
        try:                      # as Python scalars, were converted without flushing)
            out = run_flushing(eager, prim, tuple(values), params)
        finally:
            trace_state.trace = self
        if not any(traced):
            return out  # made from constants alone: a constant (folded, as jit folds it)
        refs = [a.ref if t else self._constant(a) for a, t in zip(args, traced)]
        results = out if prim.multiple_results else [out]
        if any(type(r) is not ArrayImpl for r in results):  # extended dtypes (PRNG keys)
            raise _Unplannable
        k = self.n_steps
        self.n_steps += 1
        call_args = refs
        special = prim.specialize and prim.specialize(*map(aval_of, values), **params)
        if special:  # the impl for these operand types, params bound
            self.namespace[f"f{k}"] = special
        elif all(p.isidentifier() and not keyword.iskeyword(p) for p in params):
            for name, value in params.items():
                self.namespace[f"p{k}_{name}"] = value
                call_args = call_args + [f"{name}=p{k}_{name}"]
        elif params:
            self.namespace[f"P{k}"] = params
            call_args = call_args + [f"**P{k}"]
        if not special:
            self.namespace[f"f{k}"] = prim.impl
        names = [f"r{self.n_results + i}" for i in range(len(results))]
        self.n_results += len(results)
        checked = [] if getattr(special, "exact", False) else names
        for name, r in zip(checked, results):  # a NumPy scalar, another dtype
            self.namespace[f"D_{name}"] = r._buf.dtype
        self.steps.append(Step(f"f{k}", special, call_args, names, prim.multiple_results,
                                checked))
        tracers = [PlanTracer(self, r, name) for name, r in zip(names, results)]
        return tracers if prim.multiple_results else tracers[0]

    def _constant(self, x: Any) -> str:
        """The name of a constant operand (an Array or NumPy value made without operands)."""
        ref = self.const_ref.get(id(x))
        if ref is None:
            if type(x) is ArrayImpl:
                buf = x._buf
            elif type(x) in (int, float, bool) or isinstance(x, (np.ndarray, np.generic)):
                buf = to_buffer(x)[0]
            else:  # a tracer of another trace, an extended-dtype array
                raise _Unplannable
            ref = f"C{len(self.const_ref)}"
            self.namespace[ref] = buf
            self.held += _owned_bytes(buf)
            self.const_ref[id(x)] = ref
            self.keep.append(x)
        return ref

    def finish_call(self, name: str, n_inputs: int, result: Any) -> tuple[Any, Any]:
        """(the call's result with tracers replaced by their Arrays, the compiled plan or None
        when this call cannot be replayed)."""
        self.finish()
        if type(result) in (tuple, list):
            leaves, tree = list(result), type(result)
        else:
            leaves, tree = [result], None
        if not all(type(x) is PlanTracer or type(x) is ArrayImpl for x in leaves):
            raise _Unplannable
        values, exprs, made = [], [], []
        for i, leaf in enumerate(leaves):
            if type(leaf) is ArrayImpl:  # a constant result: a new Array over its buffer
                self.namespace[f"out{i}"] = leaf._buf
                self.held += _owned_bytes(leaf._buf)
                values.append(leaf)
                exprs.append(f"ArrayImpl(out{i}, {leaf._weak})")
            elif leaf.ref.startswith("a"):  # an operand, returned as it is
                values.append(leaf.val)
                exprs.append(f"arrays[{leaf.ref[1:]}]")
            else:  # ArrayImpl(ref, weak) spelt out: no __init__ call (a plan runs untraced)
                values.append(leaf.val)
                exprs.append(f"o{i}")
                made += [f"    o{i} = new(ArrayImpl)", f"    o{i}._buf = {leaf.ref}",
                         f"    o{i}._weak = {leaf.val._weak}", f"    o{i}._sharding = None",
                         f"    if array_lib.layout_hook is not None: array_lib.layout_hook(o{i})"]
        out = values[0] if tree is None else tree(values)
        if self.refused or self.held > MAX_HELD_BYTES:  # (a plan must not pin big arrays)
            return out, None
        head = ["def run(arrays):"] + [f"    a{i} = arrays[{i}]._buf" for i in range(n_inputs)]
        if tree is None:
            tail = [f"    return {exprs[0]}"]
        else:
            self.namespace["tree"] = tree
            tail = [f"    return tree(({', '.join(exprs)},))"]
        source = "\n".join(head + self._lines(leaves) + made + tail)
        exec(compile(source, f"<eager plan of {name}>", "exec"), self.namespace)
        run = self.namespace["run"]
        run.source = source  # what the plan does, for reading (`plans_of`)
        return out, run

    def _lines(self, leaves: list) -> list[str]:
        """The plan's body: a line per step (and per result whose type it checks), a
        reduction whose result is only reshaped to keepdims' shape fused with the reshape."""
        uses: dict = {}
        for ref in [ref for step in self.steps for ref in step.args] + [
                leaf.ref for leaf in leaves if type(leaf) is PlanTracer]:
            uses[ref] = uses.get(ref, 0) + 1
        lines, steps, i = [], self.steps, 0
        while i < len(steps):
            step = steps[i]
            following = steps[i + 1] if i + 1 < len(steps) else None
            keepdims = getattr(step.special, "keepdims", None)
            if (keepdims is not None and following is not None and following.args == step.outs
                    and uses[step.outs[0]] == 1
                    and getattr(following.special, "reshapes_to", None) == keepdims.shape):
                name = f"{step.name}_keepdims"
                self.namespace[name] = keepdims
                step = Step(name, keepdims, step.args, following.outs, False, [])
                i += 1
            lines += step.source(self.namespace)
            i += 1
        return lines


#: a call whose plan would keep more constant data alive than this stays unplanned (such
#: calls are dominated by their work, and plans live as long as the cache)
MAX_HELD_BYTES = 1 << 20


def _owned_bytes(buf: np.ndarray) -> int:
    """The memory `buf` keeps alive: its base array's, counting broadcast axes once."""
    while isinstance(buf.base, np.ndarray):
        buf = buf.base
    return buf.itemsize * math.prod(n for n, s in zip(buf.shape, buf.strides) if s)


def _signature(value: Any, key: list, arrays: list) -> bool:
    """Append `value`'s part of a call's cache key to `key` (Arrays by shape, dtype and weak
    type, collected in `arrays`; static values by type, then value); False when it has no
    usable key.  Each part starts with a shape tuple or a type, so keys cannot collide."""
    t = type(value)
    if t is ArrayImpl:
        buf = value._buf
        key += (buf.shape, buf.dtype, value._weak)
        arrays.append(value)
        return True
    if t is int or t is bool or t is str or value is None:
        key += (t, value)
        return True
    if t is float:  # -0.0 == 0.0 and nan != nan: key by sign and a name for nan
        key += (t, value if value == value else "nan", math.copysign(1.0, value))
        return True
    if t is tuple or t is list:
        key += (t, len(value))
        for v in value:
            if type(v) is ArrayImpl:  # (inlined: stack([x, y]))
                buf = v._buf
                key += (buf.shape, buf.dtype, v._weak)
                arrays.append(v)
            elif not _signature(v, key, arrays):
                return False
        return True
    if (t in STATIC_TYPES or isinstance(value, (type, np.dtype))  # (a dtype's class is
            or t is FunctionType):                                   # np.dtypes.Float32DType)
        key += (t, value)  # (functions: a lax op passed as an argument, by identity)
        return True
    return False


#: further types whose values key a plan by equality (jnp's scalar types, say)
STATIC_TYPES: set = set()


def _substitute(value: Any, tracers: dict) -> Any:
    """`value` with its Arrays replaced by their tracers (the traversal of `_signature`)."""
    t = type(value)
    if t is ArrayImpl:
        return tracers[id(value)]
    if t is tuple or t is list:
        return t(_substitute(v, tracers) for v in value)
    return value


#: (function, signature, config) -> compiled plan; _SEEN after one call; None when the
#: signature cannot be planned
_plans: dict = {}
_MAX_PLANS = 4096
_SEEN = 0
caches.register(_plans.clear)


def _unplanned(plan: Any, key: tuple, fun: Callable, args: tuple, kwargs: dict,
               arrays: Sequence) -> Any:
    """`fun(*args, **kwargs)` for a key with no plan yet (`plan`: False when never seen,
    _SEEN after one call, None when it cannot be planned)."""
    if plan is False:  # first call: run as usual, plan on the next
        if len(_plans) >= _MAX_PLANS:
            _plans.clear()
        _plans[key] = _SEEN
        return fun(*args, **kwargs)
    if plan is None:  # known not to be plannable
        return fun(*args, **kwargs)
    return _record(fun, args, kwargs, arrays, key)


def scalar_operator(fun: Callable, reflected: bool, fallback: Callable) -> Callable:
    """An Array operator method whose eager calls with a Python int or float (`x > 0`,
    `2. * x`) replay the plan of `fun(x, scalar)` (`fun(scalar, x)` when `reflected`), keyed
    by the scalar's type and value as well as x's type; another Array goes to `fun` directly
    (as `fallback` would send it), anything else to `fallback(self, other)`.  The scalar is
    a constant of the plan, converted once when it is recorded."""
    def operator(self: Any, other: Any) -> Any:
        t = type(other)
        if t is ArrayImpl:
            return fun(other, self) if reflected else fun(self, other)
        if (t is float or t is int) and type(self) is ArrayImpl and trace_state.trace is None \
                and (primitive.eager_layout is None or not primitive.lays_out(self)):
            buf = self._buf
            # (a float zero's sign tells -0.0 from 0.0, which compare equal; NaN keys match
            # by identity)
            key = (fun, config.trace_key() if config_local.values
                   else config.global_trace_number, mesh_context_key(), buf.shape, buf.dtype,
                   self._weak, t, other, other or (t is float and math.copysign(1.0, other)),
                   reflected)
            plan = _plans.get(key, False)
            if plan:
                if flush_on(KEPT) is not SWITCHED:
                    return plan((self,))
                try:
                    return plan((self,))
                finally:
                    flush_off()
            return _unplanned(plan, key, fun, (other, self) if reflected else (self, other),
                              {}, (self,))
        return fallback(self, other)
    operator.__name__ = operator.__qualname__ = fallback.__name__
    return operator


def _passed_twice(arrays: list) -> bool:
    """Whether some Array is in `arrays` twice (up to three compared pairwise, not in a set)."""
    if len(arrays) == 2:
        return arrays[0] is arrays[1]
    if len(arrays) == 3:
        a, b, c = arrays
        return a is b or a is c or b is c
    return len(set(map(id, arrays))) < len(arrays)


def _record(fun: Callable, args: tuple, kwargs: dict, arrays: Sequence, key: tuple) -> Any:
    """Run `fun` under a Recorder and keep its plan; if it cannot be recorded, run it again
    as usual (which raises the function's own error, if it has one)."""
    recorder = Recorder()
    tracers: dict = {}
    for i, a in enumerate(arrays):
        tracers.setdefault(id(a), PlanTracer(recorder, a, f"a{i}"))
    trace_state.trace = recorder
    try:
        result = fun(*_substitute(args, tracers),
                     **{k: _substitute(v, tracers) for k, v in kwargs.items()})
        out, plan = recorder.finish_call(getattr(fun, "__name__", "?"), len(arrays), result)
    except Exception:  # not traceable, or the function's own error: run it as usual
        out = plan = _FAILED
    finally:
        trace_state.trace = None
        recorder.finish()
    if plan is _FAILED:
        _plans[key] = None
        return fun(*args, **kwargs)
    _plans[key] = plan  # None when refused (it warned): `out` is this call's result
    return out


_FAILED = object()


def plans_of(fun: Callable) -> list[str]:
    """The source of each plan recorded for `fun` (a jnp function), for inspection."""
    target = inspect.unwrap(fun)
    return [p.source for k, p in list(_plans.items()) if k[0] is target and p]


def _any_placed(args: tuple, kwargs: dict) -> bool:
    """parallel/eager_layout.any_placed (imported on first use: parallel imports backend)."""
    global _any_placed
    from pyjax._src.parallel.eager_layout import any_placed
    _any_placed = any_placed
    return any_placed(args, kwargs)


def planned(fun: Callable, traced: Callable | None = None) -> Callable:
    """Decorate a jnp function whose result depends only on its operands' types and its
    static arguments (any function jit can trace): eager calls go through plans, calls
    under a trace to `traced` (default: `fun`)."""
    traced = traced or fun

    @functools.wraps(fun)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if trace_state.trace is not None:
            return traced(*args, **kwargs)
        if primitive.eager_layout is not None and _any_placed(args, kwargs):
            return fun(*args, **kwargs)  # (operands laid out over a mesh: each primitive
            #                                 lays its results out, through bind)
        # the options that change tracing: the process-wide ones by number (no call, no
        # tuple to hash), the options themselves while this thread overrides some
        context = config.trace_key() if config_local.values else config.global_trace_number
        key: tuple | None = None
        if len(args) == 1 and type(args[0]) is ArrayImpl:  # one Array, static keywords:
            buf = args[0]._buf                               # the key as a tuple at once
            key = (fun, context, mesh_context_key(), buf.shape, buf.dtype, args[0]._weak)
            arrays: Sequence = args
            if kwargs:
                for name, a in kwargs.items():
                    t = type(a)
                    if t is int or t is bool or a is None:  # (axis=1, keepdims=True)
                        key += (name, t, a)
                    else:
                        key = None
                        break
        elif len(args) == 3 and not kwargs:  # three Arrays (where(c, x, y)): a tuple too
            c, x, y = args
            if (type(c) is ArrayImpl and type(x) is ArrayImpl and type(y) is ArrayImpl
                    and c is not x and c is not y and x is not y):
                cb, xb, yb = c._buf, x._buf, y._buf
                key = (fun, context, mesh_context_key(), cb.shape, cb.dtype, c._weak,
                       xb.shape, xb.dtype, x._weak, yb.shape, yb.dtype, y._weak)
                arrays = args
        if key is None:  # the same key built in a list
            parts: list = [fun, context, mesh_context_key()]
            arrays = []
            for a in args:
                if type(a) is ArrayImpl:  # inlined `_signature` (the common case)
                    buf = a._buf
                    parts += (buf.shape, buf.dtype, a._weak)
                    arrays.append(a)
                elif not _signature(a, parts, arrays):
                    return fun(*args, **kwargs)
            if kwargs:
                for name, a in kwargs.items():
                    t = type(a)
                    if t is int or t is bool or a is None:
                        parts += (name, t, a)
                    else:
                        parts.append(name)
                        if not _signature(a, parts, arrays):
                            return fun(*args, **kwargs)
            if len(arrays) > 1 and _passed_twice(arrays):  # one Array twice: another plan
                ids = [id(a) for a in arrays]
                parts.append(tuple(ids.index(i) for i in ids))
            key = tuple(parts)
        plan = _plans.get(key, False)
        if plan:  # computed as XLA computes: subnormals flushed (fp_mode)
            if flush_on(KEPT) is not SWITCHED:
                return plan(arrays)
            try:
                return plan(arrays)
            finally:
                flush_off()
        return _unplanned(plan, key, fun, args, kwargs, arrays)
    return wrapper
