"""Staging: run a Python function on tracers that record every primitive into a jaxpr.

`StagingTrace` is JAX's DynamicJaxprTrace: each tracer *is* a jaxpr variable.  Values that are
not its tracers are constants: scalars become literals (`2.0:f32[]`), arrays and tracers of outer
traces become constvars.  `make_jaxpr` and `jit` are built on `trace_to_jaxpr`.
"""
from __future__ import annotations

import inspect
import threading
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.backend.dispatch import private_buffer, to_buffer
from pyjax._src.core import dtypes
from pyjax._src.config import config
from pyjax._src.core.array import Array, ArrayImpl
from pyjax._src.core.check import check_jaxpr
from pyjax._src.core.avals import ShapedArray, pytype_aval_mappings
from pyjax._src.core.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from pyjax._src.core.source_info import user_frames
from pyjax._src.core.trace import Trace, Tracer, check_alive, trace_state, use_trace


def fun_sourceinfo(fun: Callable) -> str:
    """`name at file:line` of a function (through partials and wrappers), as errors name it."""
    while hasattr(fun, "func") and not hasattr(fun, "__code__"):
        fun = fun.func
    fun = inspect.unwrap(fun)
    name = getattr(fun, "__name__", type(fun).__name__)
    code = getattr(fun, "__code__", None)
    return f"{name} at {code.co_filename}:{code.co_firstlineno}" if code else name


class DebugInfo:
    """What a trace is for, kept to word error messages (built only when an error is printed)."""

    __slots__ = ("traced_for", "fun", "args", "kwargs", "static_argnums", "static_argnames")

    def __init__(self, traced_for: str, fun: Callable, args: tuple = (), kwargs: dict | None = None,
                 static_argnums: Sequence[int] = (), static_argnames: Sequence[str] = ()):
        self.traced_for, self.fun, self.args, self.kwargs = traced_for, fun, args, kwargs or {}
        self.static_argnums, self.static_argnames = tuple(static_argnums), tuple(static_argnames)

    def func_src_info(self) -> str:
        return fun_sourceinfo(self.fun)

    def arg_names(self) -> list[str]:
        """Names of the flattened dynamic arguments as JAX gives them: parameters by name
        (`x`, `params['w']`), *args and **kwargs entries under their parameter's name (`a[0]`,
        `kw['z']`), and `args[i]` / `kwargs['k']` when the call does not fit the signature."""
        from pyjax._src.tree_util import keystr, tree_flatten_with_path
        static = object()
        n = len(self.args)
        args = [static if i in self.static_argnums or i - n in self.static_argnums else x
                for i, x in enumerate(self.args)]
        kwargs = {k: static if k in self.static_argnames else x for k, x in self.kwargs.items()}
        ordered = None
        try:
            sig = inspect.signature(self.fun)
            bound = sig.bind(*args, **kwargs)
        except (TypeError, ValueError):
            pass
        else:
            var_kw = next((name for name, p in sig.parameters.items()
                           if p.kind is inspect.Parameter.VAR_KEYWORD), None)
            ordered = [(name, x) for name, x in bound.arguments.items()
                       if name not in kwargs and name != var_kw]
            ordered += [(k if k in bound.arguments else f"{var_kw}['{k}']", kwargs[k])
                        for k in sorted(kwargs)]
        if ordered is None:
            ordered = [("args", args)] + [(f"kwargs['{k}']", kwargs[k]) for k in sorted(kwargs)
                                          if kwargs[k] is not static]
        return [name + keystr(path) for name, x in ordered
                for path, leaf in tree_flatten_with_path(x)[0] if leaf is not static]


def abstractify(x: Any) -> ShapedArray:
    """The abstract value a traced function sees for argument `x`."""
    if type(x) is ArrayImpl:
        buf = x._buf
        if sharding_typing is None and memory_typing is None:  # (the common case)
            return ShapedArray(buf.shape, buf.dtype, x._weak)
        from pyjax._src.memory import of_array
        return ShapedArray(buf.shape, buf.dtype, x._weak, (), type_sharding(x),
                           memory_space=of_array(x))
    if isinstance(x, Array):  # tracers and key arrays
        return x.aval
    to_aval = pytype_aval_mappings.get(type(x))
    if to_aval is not None:  # references and hijax values (avals.pytype_aval_mappings)
        return to_aval(x)
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(tuple(x.shape), dtypes.canonicalize_dtype(x.dtype),
                           getattr(x, "weak_type", False))
    buf, weak = to_buffer(x)
    return ShapedArray(buf.shape, buf.dtype, weak)


def type_sharding(x: ArrayImpl) -> Any:
    """The sharding `x`'s type carries: its layout's split over Explicit mesh axes, if any."""
    placed = getattr(x, "_sharding", None)  # (set only on placed arrays)
    return None if placed is None else placed._type_sharding(x._buf.ndim)


class _EquationTyping(threading.local):
    """A rule refining each staged equation's types while it is set (shard_map's check_vma
    sets parallel/vma.py's): rule(trace, prim, atoms, params, out avals) -> (atoms, out
    avals), free to stage equations of its own (pvary) before the equation."""

    rule: Callable | None = None


equation_typing = _EquationTyping()

#: sharding_typing(prim, atoms, params, out avals) -> out avals typed by their shardings over
#: Explicit mesh axes; installed by parallel/explicit.py once such a mesh exists.
sharding_typing: Callable | None = None

#: memory_typing(prim, atoms, out avals) -> out avals in their operands' memory space;
#: installed by pyjax/_src/memory.py once a type outside device memory exists.
memory_typing: Callable | None = None


class DynamicJaxprTracer(Tracer):
    """A tracer that is a variable of the jaxpr being built."""

    __slots__ = ("jaxpr_var",)  # not `var`: that name is the jnp method
    tracer_name = "JitTracer"

    def __init__(self, trace: "StagingTrace", var: Var):
        self._trace = trace
        self.jaxpr_var = var

    @property
    def aval(self) -> ShapedArray:
        return self.jaxpr_var.aval


def _enclosing_numpy_copies() -> dict:
    """The table of NumPy constants' copies of the staging trace that a new one is nested in
    (through jvp, partial-eval and batch traces), or a new table for an outermost trace."""
    t = trace_state.trace
    while t is not None:
        copies = getattr(t, "_numpy_copies", None)
        if copies is not None:
            return copies
        t = getattr(t, "parent", None)
    return {}


def numpy_constant(x: np.ndarray) -> ArrayImpl:
    """The Array that NumPy array `x` is while a function is traced: one per array for the
    outermost staging trace and those nested in it (as JAX makes one constvar of an array that
    several operations or bodies read), a private copy of it."""
    return _copy_in(_enclosing_numpy_copies(), x)


def _copy_in(copies: dict, x: np.ndarray) -> ArrayImpl:
    """x's private copy in the table `copies` (made on first use)."""
    entry = copies.get(id(x))
    if entry is None:
        buf, weak = private_buffer(x)
        entry = copies[id(x)] = (x, ArrayImpl(buf, weak))  # (x kept: its id stays its own)
    return entry[1]


class StagingTrace(Trace):
    """Records primitives as equations; see the module docstring for how constants are kept."""

    def __init__(self, debug_info: DebugInfo | None = None):
        self.debug_info = debug_info
        self.invars: list[Var] = []
        self.eqns: list[Eqn] = []
        self.constvars: list[Var] = []
        self.const_values: list[Any] = []
        self._const_ids: dict[int, Var] = {}
        self._numpy_copies = _enclosing_numpy_copies()

    # -- inputs and constants ---------------------------------------------------------------
    def new_arg(self, aval: ShapedArray) -> DynamicJaxprTracer:
        var = Var(aval)
        self.invars.append(var)
        return DynamicJaxprTracer(self, var)

    def to_atom(self, x: Any) -> Var | Literal:
        if isinstance(x, Tracer):
            if x._trace is self:
                return x.jaxpr_var
            check_alive(x)
            return self._constvar(x, x.aval)
        if type(x) is ArrayImpl:
            buf, weak = x._buf, x._weak
        elif isinstance(x, Array):  # a concrete array of an extended dtype (PRNG keys)
            return self._constvar(x, x.aval)
        else:
            if type(x) in dtypes.python_scalar_dtypes:  # JAX prints the Python value itself
                buf, weak = private_buffer(x)
                return Literal(x, ShapedArray((), buf.dtype, weak))
            if np.ndim(x) == 0:  # NumPy scalars are literals too
                buf, weak = private_buffer(x)
                return Literal(buf, ShapedArray((), buf.dtype, weak))
            x = self._numpy_constant(x)
            buf, weak = x._buf, x._weak
        aval = ShapedArray(buf.shape, buf.dtype, weak)
        if buf.ndim == 0 and x.made_in_trace():
            # the literal keeps the array: evaluating it keeps its weak type
            return Literal(x if weak else buf, aval)
        return self._constvar(x, aval)

    def _numpy_constant(self, x: Any) -> ArrayImpl:
        """The Array a traced function's NumPy constant becomes: a private copy (it never
        aliases the caller's array), one per array for this trace and the traces it is nested
        in, so that an array closed over by several bodies is one constvar, as in JAX."""
        return _copy_in(self._numpy_copies, x)

    def _constvar(self, value: Any, aval: ShapedArray) -> Var:
        var = self._const_ids.get(id(value))
        if var is None:
            var = Var(aval)
            self._const_ids[id(value)] = var
            self.constvars.append(var)
            self.const_values.append(value)
        return var

    # -- equations --------------------------------------------------------------------------
    def process_primitive(self, prim: Any, args: tuple, params: dict) -> Any:
        if config.eager_constant_folding and not any(isinstance(x, Tracer) for x in args):
            with use_trace(None):  # ensure_compile_time_eval: concrete in, concrete out
                return prim.bind(*args, **params)
        atoms = [self.to_atom(x) for x in args]
        out = prim.abstract_eval(*[a.aval for a in atoms], **params)
        rule = equation_typing.rule
        if rule is not None:
            atoms, out = rule(self, prim, atoms, params, out)
        if sharding_typing is not None:
            out = sharding_typing(prim, atoms, params, out)
        if memory_typing is not None:
            out = memory_typing(prim, atoms, out)
        if prim.multiple_results:
            outvars = [Var(aval) for aval in out]
            self.eqns.append(Eqn(prim, atoms, outvars, params, user_frames()))
            return [DynamicJaxprTracer(self, v) for v in outvars]
        var = Var(out)
        self.eqns.append(Eqn(prim, atoms, [var], params, user_frames()))
        return DynamicJaxprTracer(self, var)

    def to_closed_jaxpr(self, outs: Sequence[Any]) -> ClosedJaxpr:
        for x in outs:
            self._check_output(x)
        outvars = [self.to_atom(x) for x in outs]
        jaxpr = Jaxpr(self.constvars, self.invars, outvars, self.eqns)
        return ClosedJaxpr(jaxpr, self.const_values)

    def _check_output(self, x: Any) -> None:
        """Outputs must be arrays or scalars; anything else is the user's bug, named as JAX does."""
        if isinstance(x, Array) or type(x) in dtypes.python_scalar_dtypes:
            return
        if isinstance(x, (np.ndarray, np.generic)) and \
                dtypes.canonicalize_dtype(x.dtype) in dtypes.supported_dtypes:
            return
        where = self.debug_info.func_src_info() if self.debug_info else "the traced function"
        traced_for = self.debug_info.traced_for if self.debug_info else "jit"
        raise TypeError(f"function {where} traced for {traced_for} returned a value of type "
                        f"{type(x)}, which is not a valid JAX type")

    # -- error messages ---------------------------------------------------------------------
    def _input_dependence(self, var: Var) -> list[int]:
        """Positions of the inputs that `var` depends on (walking the equations backwards)."""
        needed = {var}
        for eqn in reversed(self.eqns):
            if any(v in needed for v in eqn.outvars):
                needed.update(a for a in eqn.invars if type(a) is Var)
        return [i for i, v in enumerate(self.invars) if v in needed]

    def describe_dependence(self, tracer: Tracer) -> str:
        dbg = self.debug_info
        if dbg is None:
            return ""
        text = f"The error occurred while tracing the function {dbg.func_src_info()} for " \
               f"{dbg.traced_for}. "
        positions = self._input_dependence(tracer.jaxpr_var) if isinstance(tracer, DynamicJaxprTracer) else []
        if positions:
            try:
                all_names = dbg.arg_names()
                names = [all_names[i] for i in positions]
            except Exception:  # noqa: BLE001 - a message must never fail to build
                names = ["unknown"] * len(positions)
            if len(names) == 1:
                which = f"the argument {names[0]}"
            elif len(names) == 2:
                which = f"the arguments {names[0]} and {names[1]}"
            else:
                which = f"the arguments {', '.join(names[:-1])}, and {names[-1]}"
            plural = "s" if len(names) > 1 else ""
            text += ("This concrete value was not available in Python because it depends on "
                     f"the value{plural} of {which}.")
        hint = ("To fix it, mark the argument static (static_argnums / static_argnames), or "
                "use jnp.where or lax.cond / lax.while_loop instead of Python control flow.")
        return text + "\n" + hint if positions else text

    def describe_leak(self, tracer: Tracer) -> tuple[str, tuple]:
        """(which traced function leaked it, the user frames where the value was created)."""
        dbg = self.debug_info
        where = "" if dbg is None else (
            f"The function being traced when the value leaked was {dbg.func_src_info()} "
            f"traced for {dbg.traced_for}.")
        var = getattr(tracer, "jaxpr_var", None)
        frames = next((eqn.source_info for eqn in self.eqns if var in eqn.outvars), ())
        return where, frames or ()


def trace_to_jaxpr(flat_fun: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray],
                   debug_info: DebugInfo | None = None) -> ClosedJaxpr:
    """Trace `flat_fun` (flat list in, flat list out) on fresh variables of `in_avals`."""
    trace = StagingTrace(debug_info)
    args = [trace.new_arg(aval) for aval in in_avals]
    try:
        with use_trace(trace):
            outs = flat_fun(*args)
        closed = trace.to_closed_jaxpr(outs)
    finally:
        trace.finish()
    if config.enable_checks:
        check_jaxpr(closed.jaxpr)
    return closed


def make_jaxpr(fun: Callable, static_argnums: int | Sequence[int] = (),
               return_shape: bool = False, **_: Any) -> Callable[..., Any]:
    """`make_jaxpr(f)(*args)`: the ClosedJaxpr of `f` traced at the avals of `args`."""
    from pyjax._src.tree_util import tree_flatten, tree_unflatten
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)

    def make(*args: Any, **kwargs: Any) -> Any:
        static = set(i if i >= 0 else i + len(args) for i in static_argnums)
        dyn_args = [a for i, a in enumerate(args) if i not in static]
        leaves, in_tree = tree_flatten((dyn_args, kwargs))
        out_tree_box = []

        def flat_fun(*flat: Any) -> list:
            dyn, kw = tree_unflatten(in_tree, flat)
            it = iter(dyn)
            full = [a if i in static else next(it) for i, a in enumerate(args)]
            out_leaves, out_tree = tree_flatten(fun(*full, **kw))
            out_tree_box.append(out_tree)
            return out_leaves

        debug = DebugInfo("jit", fun, args, kwargs, tuple(static))
        closed = trace_to_jaxpr(flat_fun, [abstractify(x) for x in leaves], debug)
        if return_shape:
            from pyjax._src.api import ShapeDtypeStruct
            shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                      for a in closed.out_avals]
            return closed, tree_unflatten(out_tree_box[0], shapes)
        return closed

    make.__name__ = f"make_jaxpr({getattr(fun, '__name__', fun)})"
    return make
