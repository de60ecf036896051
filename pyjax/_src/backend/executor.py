"""The jit backend for now: compile a ClosedJaxpr into straight-line Python over NumPy buffers.

Each equation becomes one line `v7 = impl_3(v2, v5, **params_3)` of a generated function;
constants and literals are bound once as globals of that function, so a call does no lookups
beyond the impls themselves.  Algebraic rewrites (backend.simplify) run first, as XLA's would.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.backend import compiler
from pyjax._src.backend.dispatch import to_buffer
from pyjax._src.backend.simplify import simplify
from pyjax._src.core.jaxpr import ClosedJaxpr, Literal


def compile_jaxpr(closed: ClosedJaxpr) -> Callable[[Sequence[np.ndarray]], list]:
    """A function from input buffers to output buffers (cached on the ClosedJaxpr)."""
    if closed.executable is None:
        closed.executable = compiler.backend_compile_and_load(compiler.host_backend, closed)
    return closed.executable


def _generate(closed: ClosedJaxpr) -> Callable[[Sequence[np.ndarray]], list]:
    jaxpr = closed.jaxpr
    names: dict[Any, str] = {}
    # the module name puts NumPy's RuntimeWarnings from generated code under pyjax's filter
    # (JAX computes inf - inf or log(-1) silently)
    namespace: dict[str, Any] = {"__name__": __name__ + ".generated"}

    def bind_global(value: Any) -> str:
        name = f"g{len(namespace)}"
        namespace[name] = value
        return name

    def ref(atom: Any) -> str:
        if type(atom) is Literal:
            return bind_global(np.asarray(atom.val, atom.aval.dtype))
        return names[atom]

    for var, value in zip(jaxpr.constvars, closed.consts):
        names[var] = bind_global(to_buffer(value)[0])
    args = [f"a{i}" for i in range(len(jaxpr.invars))]
    names.update(zip(jaxpr.invars, args))
    last_use = _last_uses(jaxpr)
    lines = [f"def run({', '.join(args)}):"]
    for i, eqn in enumerate(jaxpr.eqns):
        if eqn.primitive.lowering is not None:  # compile-time work (inspect_array_sharding)
            eqn.primitive.lowering(eqn)
        outs = [f"v{i}_{j}" for j in range(len(eqn.outvars))]
        names.update(zip(eqn.outvars, outs))
        impl = bind_global(eqn.primitive.impl)
        call_args = [ref(a) for a in eqn.invars]
        if eqn.params:
            call_args.append("**" + bind_global(eqn.params))
        call = f"{impl}({', '.join(call_args)})"
        if eqn.primitive.multiple_results:
            line = (f"    {', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}"
                    if outs else f"    {call}")
        else:
            line = f"    {outs[0]} = {call}"
        lines.append(f"{line}  # {eqn.primitive.name}")
        dead = [names[v] for v in last_use.get(i, ())]
        if dead:  # free temporaries at once: big buffers then recycle instead of page-faulting
            lines.append(f"    del {', '.join(dead)}")
    lines.append(f"    return [{', '.join(ref(v) for v in jaxpr.outvars)}]")
    source = "\n".join(lines)
    exec(compile(source, f"<jaxpr {id(jaxpr):x}>", "exec"), namespace)
    run = namespace["run"]
    call = lambda buffers: run(*buffers)  # noqa: E731
    call.positional = run  # loops call the generated function directly (no list per step)
    call.source = source  # what jax.stages.Compiled.as_text() shows
    return call


def _last_uses(jaxpr: Any) -> dict[int, list]:
    """For each equation index, the variables used there for the last time (not outputs)."""
    keep = {v for v in jaxpr.outvars if type(v) is not Literal}
    last: dict[Any, int] = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for a in eqn.invars:
            if type(a) is not Literal:
                last[a] = i
    by_eqn: dict[int, list] = {}
    for var, i in last.items():
        if var not in keep and var not in jaxpr.constvars:
            by_eqn.setdefault(i, []).append(var)
    return by_eqn
