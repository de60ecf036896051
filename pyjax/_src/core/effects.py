"""Effects: what an equation does besides computing its outputs (a print, a host callback).

An effect is an instance of an `Effect` subclass whose `str` is the name JAX prints
(`effect=Debug`).  Primitives that have effects set `Primitive.effectful`, so that dead-code
removal keeps their equations (`jaxpr.has_effects`).  pyjax runs a jitted function's equations
in program order, so ordered and unordered effects both happen in the order they were staged.
"""
from __future__ import annotations


class Effect:
    """Base class of effects (JAX's `jax._src.effects.Effect`)."""
