"""The jit backend for now: turn a ClosedJaxpr into a Python callable over NumPy buffers.

Each equation becomes (impl, input slots, output slots, params) in a flat program that runs
with a list as its environment; constants and literals are resolved once, at compile time.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.backend.dispatch import to_buffer
from pyjax._src.backend.simplify import simplify
from pyjax._src.core.jaxpr import ClosedJaxpr, Literal


def compile_jaxpr(closed: ClosedJaxpr) -> Callable[[Sequence[np.ndarray]], list]:
    """A function from input buffers to output buffers (cached on the ClosedJaxpr)."""
    if closed.executable is not None:
        return closed.executable
    original, closed = closed, simplify(closed)
    jaxpr = closed.jaxpr
    slot: dict[Any, int] = {}
    init: list[Any] = []

    def new_slot(var: Any, value: Any = None) -> int:
        slot[var] = len(init)
        init.append(value)
        return slot[var]

    for var, value in zip(jaxpr.constvars, closed.consts):
        new_slot(var, to_buffer(value)[0])
    in_slots = [new_slot(v) for v in jaxpr.invars]

    def ref(atom: Any) -> int:
        if type(atom) is Literal:
            return new_slot(object(), atom.val)
        return slot[atom]

    program = []
    for eqn in jaxpr.eqns:
        ins = tuple(ref(a) for a in eqn.invars)
        outs = tuple(new_slot(v) for v in eqn.outvars)
        prim = eqn.primitive
        program.append((prim.impl, ins, outs, eqn.params, prim.multiple_results))
    out_slots = [ref(v) for v in jaxpr.outvars]

    def run(args: Sequence[np.ndarray]) -> list:
        env = list(init)
        for i, a in zip(in_slots, args):
            env[i] = a
        for impl, ins, outs, params, multiple in program:
            result = impl(*[env[i] for i in ins], **params)
            if multiple:
                for i, r in zip(outs, result):
                    env[i] = r
            else:
                env[outs[0]] = result
        return [env[i] for i in out_slots]

    original.executable = run
    return run
