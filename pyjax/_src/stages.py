"""Ahead-of-time stages of a jitted function: `jit(f).trace(...)` -> Traced, `.lower()` ->
Lowered, `.compile()` -> Compiled, as in `jax.stages`.

pyjax has no MLIR or XLA.  A Lowered holds the jaxpr after pyjax's compile-time passes
(backend/passes.py) and its `as_text()` prints that jaxpr; a Compiled holds the executable
(backend/executable.py) and its `as_text()` prints the generated tier 0 Python, the fusion
plan, and the LLVM IR of the tier 1 kernels.
Trees, argument info, the call-time checks and their errors are JAX's; cost and memory
analyses are estimates from the jaxpr (backend/cost.py).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Protocol, Union, runtime_checkable

import numpy as np

from pyjax._src.backend import cost
from pyjax._src.backend.dispatch import detach, wrap
from pyjax._src.backend.executor import compile_jaxpr
from pyjax._src.backend.fp_mode import run_flushing
from pyjax._src.backend.passes import optimize
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr, eval_jaxpr
from pyjax._src.core.trace import Tracer, trace_state
from pyjax._src.primitives.control_flow.common import structure_differences
from pyjax._src.transforms.staging import abstractify
from pyjax._src.tree_util import keystr, tree_flatten, tree_leaves, tree_map, tree_unflatten

#: Options for `Lowered.compile`, as JAX types them.  pyjax's backend has no XLA flags: the
#: options are kept on the Compiled (`compiler_options`) and otherwise have no effect.
CompilerOptions = dict[str, Union[str, bool]]


@dataclasses.dataclass(frozen=True)
class ArgInfo:
    """The abstract value of one flattened argument and whether it was donated."""

    _aval: Any
    donated: bool

    @property
    def shape(self) -> tuple[int, ...]:
        if not hasattr(self._aval, "shape"):
            raise TypeError(f"No shape attribute with aval of type {type(self._aval)}")
        return self._aval.shape

    @property
    def dtype(self) -> Any:
        if not hasattr(self._aval, "dtype"):
            raise TypeError(f"No dtype attribute with aval of type {type(self._aval)}")
        return self._aval.dtype


class Stage:
    """What every stage knows: its arguments (a tree of ArgInfo over (args, kwargs))."""

    args_info: Any
    out_tree: Any

    @property
    def in_tree(self) -> Any:
        """Tree structure of the pair (positional arguments, keyword arguments)."""
        return tree_flatten(self.args_info)[1]

    @property
    def in_avals(self) -> Any:
        return tree_map(lambda a: a._aval, self.args_info)

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        """Flat indices of the donated arguments."""
        return tuple(i for i, a in enumerate(tree_leaves(self.args_info)) if a.donated)


@dataclasses.dataclass(frozen=True)
class _Program:
    """What the stages share: the traced jaxpr and how to name and rebuild its values."""

    jaxpr: ClosedJaxpr
    out_tree: Any
    args_info: Any
    arg_names: list[str]
    fun_name: str


def _shape_dtype(aval: ShapedArray, **kw: Any) -> Any:
    from pyjax._src.api import ShapeDtypeStruct
    return ShapeDtypeStruct(aval.shape, aval.dtype, **kw)


class Traced(Stage):
    """A function traced to a jaxpr for given argument types, ready to lower."""

    def __init__(self, program: _Program):
        self._program = program
        self.args_info = program.args_info
        self.out_tree = program.out_tree

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._program.jaxpr

    @property
    def fun_name(self) -> str:
        return self._program.fun_name

    @property
    def out_avals(self) -> Any:
        return tree_unflatten(self.out_tree, self.jaxpr.out_avals)

    @property
    def out_info(self) -> Any:
        """A tree of ShapeDtypeStruct (weak types kept) of the outputs."""
        return tree_unflatten(self.out_tree, [_shape_dtype(a, weak_type=a.weak_type)
                                              for a in self.jaxpr.out_avals])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Evaluate the jaxpr (primitive by primitive) on arguments of the traced structure."""
        leaves = _checked_leaves(self.in_tree, args, kwargs)
        outs = eval_jaxpr(self.jaxpr.jaxpr, self.jaxpr.consts, *leaves)
        return tree_unflatten(self.out_tree, outs)

    def lower(self, *, lowering_platforms: tuple[str, ...] | None = None,
              _private_parameters: Any = None) -> "Lowered":
        """Apply pyjax's compile-time rewrites: the result is ready to compile."""
        return Lowered(self._program)


class Lowered(Stage):
    """A traced function after pyjax's compile-time rewrites (its IR is the rewritten jaxpr)."""

    def __init__(self, program: _Program):
        self._program = program
        self.args_info = program.args_info
        self.out_tree = program.out_tree
        self._rewritten = optimize(program.jaxpr)

    @property
    def out_info(self) -> Any:
        return tree_unflatten(self.out_tree,
                              [_shape_dtype(a) for a in self._program.jaxpr.out_avals])

    def compile(self, compiler_options: CompilerOptions | None = None, *,
                device_assignment: Any = None) -> "Compiled":
        """Generate the executable (Python over NumPy)."""
        if compiler_options is not None and not isinstance(compiler_options, dict):
            raise TypeError(f"compiler_options must be a dict, got {type(compiler_options)}")
        return Compiled(self._program, dict(compiler_options or {}))

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The rewritten jaxpr's text (pyjax lowers to no MLIR dialect)."""
        _check_dialect(dialect)
        return str(self._rewritten)

    def compiler_ir(self, dialect: str | None = None) -> Any:
        """The rewritten ClosedJaxpr; None for 'stablehlo' and 'hlo', which pyjax does not
        produce (JAX returns None for an IR that is unavailable)."""
        if dialect in ("stablehlo", "hlo"):
            return None
        _check_dialect(dialect)
        return self._rewritten

    def cost_analysis(self) -> dict[str, float]:
        """Estimated 'flops', 'transcendentals' and 'bytes accessed' of the traced jaxpr (each
        equation reading its operands and writing its results, nothing fused or rewritten)."""
        return cost.lowered_cost(self._program.jaxpr)


def _check_dialect(dialect: str | None) -> None:
    if dialect in ("stablehlo", "hlo"):
        raise ValueError(f"pyjax has no {dialect} lowering: as_text() with no dialect prints "
                         "the jaxpr that is compiled")
    if dialect is not None:
        raise ValueError(f"unknown dialect: {dialect}")


class Compiled(Stage):
    """The executable of a lowered function, callable with arguments of the compiled types."""

    def __init__(self, program: _Program, compiler_options: dict):
        self._program = program
        self.args_info = program.args_info
        self.out_tree = program.out_tree
        self.compiler_options = compiler_options
        self._run = compile_jaxpr(program.jaxpr)
        self._in_tree = self.in_tree
        self._ref_avals = [a._aval for a in tree_leaves(self.args_info)]

    def as_text(self) -> str:
        """The generated tier 0 Python (with the fusion plan), then the tier 1 kernels' LLVM
        IR (waiting for background compiles)."""
        native = self._run.native_text()
        return self._run.source + ("\n\n" + native if native else "")

    def cost_analysis(self) -> dict[str, float]:
        """Estimated 'flops', 'transcendentals' and 'bytes accessed' (elementwise work fused, as
        XLA fuses it: the program's inputs and outputs and the results of dot products)."""
        return cost.compiled_cost(optimize(self._program.jaxpr))

    def memory_analysis(self) -> cost.CompiledMemoryStats:
        return cost.memory_stats(self._program.jaxpr, self.as_text())

    def runtime_executable(self) -> Callable:
        """The generated function from input buffers to output buffers."""
        return self._run

    @property
    def out_info(self) -> Any:
        sharding = _default_sharding()
        return tree_unflatten(self.out_tree, [_shape_dtype(a, sharding=sharding)
                                              for a in self._program.jaxpr.out_avals])

    @property
    def input_shardings(self) -> Any:
        return tree_map(lambda _: _default_sharding(), self.args_info)

    @property
    def output_shardings(self) -> Any:
        return tree_unflatten(self.out_tree,
                              [_default_sharding()] * len(self._program.jaxpr.out_avals))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves, in_tree = tree_flatten((args, kwargs))
        if in_tree != self._in_tree:
            raise TypeError(_tree_mismatch_message(in_tree, self._in_tree))
        if trace_state.trace is not None:
            for x in leaves:
                if isinstance(x, Tracer):
                    raise TypeError(
                        "Cannot apply JAX transformations to a function lowered and compiled "
                        "for a particular signature. Detected argument of Tracer type "
                        f"{type(x)}.")
        self._check_avals([abstractify(x) for x in leaves])
        outs = run_flushing(self._run, [_buffer(x) for x in leaves])  # as XLA (fp_mode)
        if any(type(x) is not ArrayImpl for x in leaves):
            outs = detach(outs, leaves, True)
        return tree_unflatten(self.out_tree, [wrap(b, a) for b, a in
                                              zip(outs, self._program.jaxpr.out_avals)])

    def _check_avals(self, avals: list[ShapedArray]) -> None:
        names = self._program.arg_names
        errors = [f"Argument '{name}' compiled with {ref.str_short()} and called with "
                  f"{got.str_short()}"
                  for ref, got, name in zip(self._ref_avals, avals, names)
                  if (ref.shape, ref.dtype) != (got.shape, got.dtype)]
        if errors:
            shown = "\n".join(errors[:5])
            count = f"The first 5 of {len(errors)}" if len(errors) >= 5 else "The"
            raise TypeError(
                "Argument types differ from the types for which this computation was "
                "compiled. Perhaps you are calling the compiled executable with a different "
                f"enable_x64 mode than when it was AOT compiled? {count} mismatches are:\n"
                f"{shown}")


def _buffer(x: Any) -> np.ndarray:
    """x's buffer, waiting for an Array still computing (an AOT call runs at once)."""
    from pyjax._src.backend.async_dispatch import resolved
    from pyjax._src.transforms.jit import _leaf_input
    return resolved([_leaf_input(x)])[0]


def _default_sharding() -> Any:
    from pyjax._src.parallel.devices import default_device
    from pyjax._src.parallel.sharding import SingleDeviceSharding
    return SingleDeviceSharding(default_device())


def _tree_mismatch_message(got: Any, expected: Any) -> str:
    diffs = structure_differences(got, expected)
    lines = ["Function compiled with input pytree does not match the input pytree it was "
             f"called with. There are {len(diffs)} mismatches, including:"]
    for path, now, seen, why in diffs:
        first, *rest = path
        base = ("args", "kwargs")[first.idx]
        lines.append(f"    * at {base}{keystr(tuple(rest))}, seen {seen} but now given {now}, "
                     f"so {why}")
    return "\n".join(lines)


def _checked_leaves(in_tree: Any, args: tuple, kwargs: dict) -> list:
    leaves, tree = tree_flatten((args, kwargs))
    if tree != in_tree:
        raise TypeError(_tree_mismatch_message(tree, in_tree))
    return leaves


@runtime_checkable
class Wrapped(Protocol):
    """A function that can be called, traced, lowered and compiled (what `jit` returns)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

    def trace(self, *args: Any, **kwargs: Any) -> Traced: ...

    def lower(self, *args: Any, **kwargs: Any) -> Lowered: ...


def make_traced(jaxpr: ClosedJaxpr, out_tree: Any, dyn_args: tuple, dyn_kwargs: dict,
                donated: list[bool], arg_names: list[str], fun_name: str) -> Traced:
    """The Traced stage of a jit trace of (dyn_args, dyn_kwargs); `donated` is per leaf."""
    _, in_tree = tree_flatten((dyn_args, dyn_kwargs))
    info = tree_unflatten(in_tree, [ArgInfo(a, d) for a, d in zip(jaxpr.in_avals, donated)])
    return Traced(_Program(jaxpr, out_tree, info, arg_names, fun_name))
