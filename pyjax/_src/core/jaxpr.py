"""The jaxpr IR (Var, Literal, Eqn, Jaxpr, ClosedJaxpr), its evaluator and its printer.

The printer reproduces JAX 0.10's text: variables named a..z, ba.. in order of first print,
literals as `2.0:f32[]`, params sorted in brackets, sub-jaxprs used more than once hoisted to
`let name = { ... } in`, and lines broken at width 80 by the pretty printer.
"""
from __future__ import annotations

import re
import weakref
from collections import Counter, deque
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.core import pretty as pp
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray


class Var:
    """A jaxpr variable; identity is the variable, the name is chosen when printing."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Var({self.aval.str_short(True)})"


class DropVar(Var):
    """An equation output nobody uses; prints as `_`."""

    __slots__ = ()


class Literal:
    """A scalar constant inlined into an equation."""

    __slots__ = ("val", "aval")

    def __init__(self, val: np.ndarray, aval: ShapedArray):
        self.val, self.aval = val, aval

    def __repr__(self) -> str:
        return f"Literal({self.val})"


Atom = Var | Literal


class Eqn:
    """`outvars = primitive[params] invars`."""

    __slots__ = ("primitive", "invars", "outvars", "params", "source_info")

    def __init__(self, primitive: Any, invars: list, outvars: list, params: dict,
                 source_info: Any = None):
        self.primitive, self.invars, self.outvars = primitive, invars, outvars
        self.params, self.source_info = params, source_info

    def __repr__(self) -> str:
        return pp_eqn(self, PrintContext()).format()


class Jaxpr:
    """A typed first-order program: constvars and invars in, outvars out, eqns in order."""

    __slots__ = ("constvars", "invars", "outvars", "eqns", "debug_info", "__weakref__")

    def __init__(self, constvars: list, invars: list, outvars: list, eqns: list,
                 debug_info: Any = None):
        self.constvars, self.invars, self.outvars = constvars, invars, outvars
        self.eqns, self.debug_info = eqns, debug_info

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    def __str__(self) -> str:
        return pp_toplevel(self).format()

    __repr__ = __str__

    def pretty_print(self, **_: Any) -> str:
        return str(self)


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars."""

    __slots__ = ("jaxpr", "consts", "executable", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any]):
        self.jaxpr, self.consts = jaxpr, list(consts)
        self.executable: Callable | None = None  # filled lazily by the backend

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.jaxpr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals

    @property
    def eqns(self) -> list[Eqn]:
        return self.jaxpr.eqns

    def __str__(self) -> str:
        return str(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, **_: Any) -> str:
        return str(self.jaxpr)


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any, fold: bool = False
               ) -> list[Any]:
    """Run `jaxpr` by binding each equation's primitive: works under any current trace.
    With `fold` (inlining into a trace), primitives with a `const_fold` rule fold constant
    operands instead of staging an equation, as JAX's inline_jaxpr_into_trace does."""
    env: dict[Var, Any] = {}

    def read(atom: Atom) -> Any:
        return atom.val if type(atom) is Literal else env[atom]

    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        operands = [read(a) for a in eqn.invars]
        folder = eqn.primitive.const_fold if fold else None
        out = None if folder is None else folder(*operands, **eqn.params)
        if out is None:
            out = eqn.primitive.bind(*operands, **eqn.params)
        env.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else (out,)))
    return [read(v) for v in jaxpr.outvars]


def jaxprs_in_params(params: dict) -> list[Jaxpr]:
    """Sub-jaxprs held in an equation's params (jit bodies, branches, loop bodies)."""
    found = []
    for value in params.values():
        items = value if isinstance(value, tuple) else (value,)
        for item in items:
            if isinstance(item, ClosedJaxpr):
                found.append(item.jaxpr)
            elif isinstance(item, Jaxpr):
                found.append(item)
    return found


_effects_cache: "weakref.WeakKeyDictionary[Jaxpr, bool]" = weakref.WeakKeyDictionary()


def jaxpr_has_effects(jaxpr: Jaxpr) -> bool:
    """Does running `jaxpr` have effects beyond its outputs (a callback, a print), directly or
    in a body it holds?  (Remembered per jaxpr: jaxprs do not change once built.)"""
    found = _effects_cache.get(jaxpr)
    if found is None:
        found = _effects_cache[jaxpr] = any(has_effects(e) for e in jaxpr.eqns)
    return found


def has_effects(eqn: Eqn) -> bool:
    """An equation that must run even when nothing reads its outputs: its primitive is
    effectful or a body in its params (jit, cond, loops, custom rules) has effects."""
    return eqn.primitive.effectful or any(jaxpr_has_effects(j)
                                          for j in jaxprs_in_params(eqn.params))


def dce(jaxpr: Jaxpr, used_outputs: Sequence[bool], prune_invars: bool = False,
        prune_equations: bool = False) -> tuple[Jaxpr, list[bool]]:
    """Keep the outputs marked used and the equations they need, and every equation with
    effects (as JAX's dce_jaxpr does); report which inputs are read (and drop the others
    when `prune_invars`).  With `prune_equations`, an equation whose primitive has a
    `dce_rule` (JAX's dce_rules: scan), `rule(used_outputs, eqn) -> eqn or None`, also loses
    the operands and results it does not need."""
    outvars = [v for v, u in zip(jaxpr.outvars, used_outputs) if u]
    live = {v for v in outvars if type(v) is Var}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        rule = getattr(eqn.primitive, "dce_rule", None) if prune_equations else None
        if rule is not None:
            eqn = rule([v in live for v in eqn.outvars], eqn)  # (None: not needed)
            if eqn is not None:
                kept.append(eqn)
                live.update(a for a in eqn.invars if type(a) is Var)
            continue
        if any(v in live for v in eqn.outvars) or has_effects(eqn):
            kept.append(eqn)
            live.update(a for a in eqn.invars if type(a) is Var)
    used_inputs = [v in live for v in jaxpr.invars]
    invars = [v for v, u in zip(jaxpr.invars, used_inputs) if u] if prune_invars \
        else list(jaxpr.invars)
    return Jaxpr(jaxpr.constvars, invars, outvars, kept[::-1], jaxpr.debug_info), used_inputs


# ---------------------------------------------------------------------------------------------
# Printing
# ---------------------------------------------------------------------------------------------

def _alphabetic(n: int) -> str:
    s = ""
    while not s or n:
        n, i = divmod(n, 26)
        s = chr(97 + i) + s
    return s


class PrintContext:
    """Names variables in order of first appearance; remembers hoisted (shared) sub-jaxprs."""

    def __init__(self) -> None:
        self.names: dict[Var, str] = {}
        self.shared_jaxprs: dict[Jaxpr, str] = {}
        self.shared_names: set[str] = set()
        self._counter = 0

    def name(self, v: Var) -> str:
        if type(v) is DropVar:
            return "_"
        name = self.names.get(v)
        if name is None:
            while True:
                name = _alphabetic(self._counter)
                self._counter += 1
                if name not in self.shared_names:
                    break
            self.names[v] = name
        return name

    def suggest_same_names(self, for_vars: Sequence[Atom], like_vars: Sequence[Atom]) -> None:
        """Give a sub-jaxpr's binders the names of the outer atoms they are bound to."""
        if len(for_vars) != len(like_vars):
            return
        used = set()
        for for_v, like_v in zip(for_vars, like_vars):
            if (type(like_v) is Var and like_v not in used and type(for_v) is Var
                    and for_v not in self.names):
                used.add(like_v)
                self.names[for_v] = self.name(like_v)


def pp_atom(atom: Atom, context: PrintContext) -> str:
    if type(atom) is Literal:
        value = atom.val
        if type(value) is ArrayImpl and value.python_value() is not None:
            value = value.python_value()  # a weak constant JAX keeps as the Python number
        text = "[...]" if np.shape(value) else str(np.asarray(value).item())
        return f"{text}:{atom.aval.str_short(True)}"
    return context.name(atom)


def pp_vars(vs: Sequence[Atom], context: PrintContext, *, separator: str = "",
            print_shapes: bool = False) -> pp.Doc:
    if print_shapes:
        docs = [pp.text(pp_atom(v, context) + ":" + v.aval.str_short(True)) for v in vs]
    else:
        docs = [pp.text(pp_atom(v, context)) for v in vs]
    return pp.nest(2, pp.group(pp.join(pp.text(separator) + pp.group(pp.brk()), docs)))


def _param_str(value: Any) -> str:
    if isinstance(value, np.dtype):
        return value.name
    s = str(value)
    return re.sub(r" at 0x([0-9a-fA-F]+)", lambda m: " at 0x" + "X" * len(m.group(1)), s)


def pp_kv_pair(key: str, value: Any, context: PrintContext) -> pp.Doc:
    if type(value) is tuple and value and all(isinstance(j, (Jaxpr, ClosedJaxpr)) for j in value):
        docs = [pp_jaxpr(j.jaxpr if isinstance(j, ClosedJaxpr) else j, context) for j in value]
        doc = pp.group(pp.concat([pp.nest(2, pp.concat([pp.text("("), pp.brk(""),
                                                        pp.join(pp.brk(), docs)])),
                                  pp.brk(""), pp.text(")")]))
    elif isinstance(value, ClosedJaxpr):
        doc = pp_jaxpr(value.jaxpr, context)
    elif isinstance(value, Jaxpr):
        doc = pp_jaxpr(value, context)
    else:
        doc = pp.text(_param_str(value))
    return pp.text(f"{key}=") + doc


def pp_kv_pairs(pairs: Sequence[tuple[str, Any]], context: PrintContext) -> pp.Doc:
    if not pairs:
        return pp.NIL
    inner = pp.join(pp.brk(), [pp_kv_pair(k, v, context) for k, v in pairs])
    return pp.group(pp.concat([pp.nest(2, pp.concat([pp.text("["), pp.brk(""), inner])),
                               pp.brk(""), pp.text("]")]))


def pp_eqn_standard(eqn: Eqn, context: PrintContext, param_names: Sequence[str] | None = None,
                    params: dict | None = None) -> pp.Doc:
    """`outs = name[params] ins`, params in sorted order unless `param_names` says otherwise
    (`params` replaces the equation's own, for rules that print a param differently)."""
    params = eqn.params if params is None else params
    if param_names is None:
        param_names = sorted(params)
    lhs = pp_vars(eqn.outvars, context, print_shapes=True)
    rhs = [pp.text(eqn.primitive.name),
           pp_kv_pairs([(p, params[p]) for p in param_names], context),
           pp.text(" ") + pp_vars(eqn.invars, context)]
    if eqn.outvars:
        return pp.concat([lhs, pp.text(" = "), *rhs])
    return pp.concat(rhs)


def pp_eqn(eqn: Eqn, context: PrintContext) -> pp.Doc:
    rule = eqn.primitive.pp_rule
    return rule(eqn, context) if rule is not None else pp_eqn_standard(eqn, context)


def _pp_skeleton(jaxpr: Jaxpr, context: PrintContext) -> pp.Doc:
    constvars = pp_vars(jaxpr.constvars, context, print_shapes=True)
    invars = pp_vars(jaxpr.invars, context, print_shapes=True)
    eqns = pp.join(pp.brk("; "), [pp_eqn(e, context) for e in jaxpr.eqns])
    outvars = pp.concat([pp.text("("), pp_vars(jaxpr.outvars, context, separator=","),
                         pp.text(")" if len(jaxpr.outvars) != 1 else ",)")])
    return pp.group(pp.nest(2, pp.concat([
        pp.text("{ "), pp.text("lambda "), constvars, pp.text("; "), invars, pp.text(". "),
        pp.text("let"), pp.nest(2, pp.brk() + eqns), pp.brk(), pp.text("in "), outvars,
    ])) + pp.text(" }"))


def pp_jaxpr(jaxpr: Jaxpr, context: PrintContext) -> pp.Doc:
    name = context.shared_jaxprs.get(jaxpr)
    if name is not None:
        return pp.text(name)
    return _pp_skeleton(jaxpr, context)


def _unused_outvars(jaxpr: Jaxpr) -> dict[Var, str]:
    """Equation outputs nothing reads: JAX prints them as `_` in the top-level jaxpr."""
    used = {v for v in jaxpr.outvars if type(v) is Var}
    unused = {}
    for eqn in reversed(jaxpr.eqns):
        unused.update((v, "_") for v in eqn.outvars if v not in used)
        used.update(a for a in eqn.invars if type(a) is Var)
    return unused


_PRINT_ONLY_NAME = frozenset({"custom_jvp_call", "custom_vjp_call"})


def pp_toplevel(top: Jaxpr) -> pp.Doc:
    """The whole printout: shared sub-jaxprs first (`let f = {...} in`), then the jaxpr."""
    context = PrintContext()
    context.names.update(_unused_outvars(top))
    names: dict[Jaxpr, str] = {}
    counts: Counter = Counter()
    queue = deque([top])
    while queue:
        jaxpr = queue.popleft()
        counts[jaxpr] += 1
        if jaxpr is not top and len(jaxpr.eqns) > 10:
            counts[jaxpr] += 1
        for eqn in jaxpr.eqns:
            subs = jaxprs_in_params(eqn.params)
            # custom_jvp/vjp calls print a `name` that JAX's pp rules add: it names nothing
            name = None if eqn.primitive.name in _PRINT_ONLY_NAME else eqn.params.get("name")
            queue.extend(subs)
            if name is not None:
                for sub in subs:
                    names.setdefault(sub, name.strip("<>"))
    name_counts: Counter = Counter()
    shared = []
    for jaxpr, count in counts.items():
        if count == 1:
            continue
        name = names.get(jaxpr, "jaxpr")
        seen = name_counts[name]
        name_counts[name] += 1
        if seen:
            name += str(seen)
            name_counts[name] += 1
        context.shared_names.add(name)
        context.shared_jaxprs[jaxpr] = name
        shared.append((name, jaxpr))
    docs = [pp.concat([pp.text(f"let {name} = "), _pp_skeleton(jaxpr, context),
                       pp.text(" in"), pp.brk()]) for name, jaxpr in shared]
    docs.append(pp_jaxpr(top, context))
    return pp.concat(docs)
