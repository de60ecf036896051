"""Primitive: one operation and all of its rules, as attributes of one object.

    impl(*buffers, **params)            NumPy implementation (eager and the executor)
    abstract_eval(*avals, **params)     output aval(s); raises JAX's errors for bad input
    eager(prim, args, params)           eager dispatch (default: check with abstract_eval, run impl)
    jvp / transpose / batch             slots filled by the transformation issues
    lowering(eqn)                       called once when a jaxpr holding the equation is compiled
    batch_collective(trace, vals, dims, **params)  collectives: act on the vmap/pmap axis itself
    partial_eval(trace, args, params)   custom split into known/unknown (call primitives)
    partial_eval_known                  partial_eval runs even when every operand is known
                                        (scan: JAX's rule hoists loop-invariant work then too)
    pp_rule(eqn, context)               custom jaxpr printing (None: the standard form)
    effectful                           has effects beyond its outputs: never dropped as dead
    calls_python                        runs the user's Python (callbacks): a program holding
                                        it runs where it is called, never on the async worker
    const_fold(*args, **params)         outputs for constant operands, or None: used when a
                                        jaxpr is inlined into a trace (JAX's const_fold_rules)
    specialize(*avals, **params)        the impl for operands of these types with the params
                                        bound (work that depends on them done once), or None:
                                        eager plans and tier 0 call it on buffers instead of
                                        impl (backend/specialized.py)
    vma(union, in_aval, check, order, **params)  the manual axes a shard_map body's result
                                        varies over, from its operands' union (collectives;
                                        None: the union)
    sharding_rule(eqn, operand_specs, mesh_sizes)  the PartitionSpec entries of its results
                                        given its operands' (how splits over mesh axes flow:
                                        parallel/propagation.py, which also holds the common
                                        rules; None: results replicated)
    result_mesh(params)                 the mesh an equation lays its results out over by
                                        itself, named in its parameters (shard_map, reshard,
                                        ...; None for primitives whose layout follows operands)
    foldable                            jit computes an equation of it whose operands are all
                                        scalar literals while compiling, on the host (XLA's
                                        constant folding: elementwise arithmetic)
"""
from __future__ import annotations

from typing import Any, Callable

from pyjax._src.backend.fp_mode import KEPT, SWITCHED, flush_off, flush_on
from pyjax._src.core.trace import trace_state

#: Every primitive ever created, by name: the census of rules is taken from here.
registry: dict[str, "Primitive"] = {}

#: eager_layout(prim, args, params) -> prim's eager outputs laid out over the mesh the
#: arguments are laid out on, or None when no argument is (set by parallel/eager_layout.py
#: while an Array placed by a NamedSharding lives; JAX runs an eager op as a jit)
eager_layout: Callable | None = None


def lays_out(x: Any) -> bool:
    """Whether an eager result computed from `x` must be laid out by `eager_layout` (x was
    placed, and the hook is on): jnp's fast paths that skip `bind` step aside then."""
    return eager_layout is not None and getattr(x, "_sharding", None) is not None


class Primitive:
    """A named operation; `bind` hands it to the current trace (eager when there is none)."""

    #: whether instances join `registry` (the census of pyjax's own primitives); primitives
    #: that libraries define through JAX's extension API do not
    census = True
    #: see the module docstring (class defaults: subclasses that set their own rules, the
    #: extension API's and hijax's, inherit them)
    foldable = False
    partial_eval_known = False
    calls_python = False
    sharding_rule: Callable[..., Any] | None = None
    result_mesh: Callable[[dict], Any] | None = None

    def __init__(self, name: str, *, multiple_results: bool = False):
        from pyjax._src.backend.dispatch import apply_primitive
        self.name = name
        self.multiple_results = multiple_results
        self.impl: Callable[..., Any] | None = None
        self.abstract_eval: Callable[..., Any] | None = None
        self.eager: Callable[["Primitive", tuple, dict], Any] = apply_primitive
        self.jvp: Callable[..., Any] | None = None
        self.transpose: Callable[..., Any] | None = None
        self.batch: Callable[..., Any] | None = None
        self.batch_collective: Callable[..., Any] | None = None
        self.lowering: Callable[..., Any] | None = None
        self.pp_rule: Callable[..., Any] | None = None
        self.partial_eval: Callable[..., Any] | None = None
        self.effectful = False
        self.const_fold: Callable[..., Any] | None = None
        self.specialize: Callable[..., Any] | None = None
        self.vma: Callable[..., Any] | None = None
        if self.census:
            registry[name] = self

    def bind(self, *args: Any, **params: Any) -> Any:
        trace = trace_state.trace
        if trace is not None:
            return trace.process_primitive(self, args, params)
        if eager_layout is not None:
            placed = eager_layout(self, args, params)
            if placed is not None:
                return placed
        return self.run_eager(args, params)

    def run_eager(self, args: tuple, params: dict) -> Any:
        """The eager rule computed as XLA computes, with subnormals flushed (fp_mode), unless
        an outer eager call already switched flushing on and will switch it off."""
        if flush_on(KEPT) is not SWITCHED:
            return self.eager(self, args, params)
        try:
            return self.eager(self, args, params)
        finally:
            flush_off()

    def __repr__(self) -> str:
        return self.name
