"""jax.debug: printing, logging and Python callbacks that work inside jit, vmap and grad, and
sharding inspection.

`debug_callback` and `debug_print` are effectful primitives: they are never dropped from a
jitted program, run when the program runs (once per call, in program order), once per batch
element under vmap (the batch is unrolled), and on primal values only under differentiation
(their JVP binds them on the primals; they have no cotangent).  Eagerly the callback gets the
arguments as Arrays (weak types kept); inside jit it gets Arrays of the program's buffers, and
a failure surfaces as the JaxRuntimeError a host callback raises.
"""
from __future__ import annotations

import copy
import importlib.util
import logging
import string
import sys
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.backend.dispatch import as_operand
from pyjax._src.backend.fp_mode import run_unflushed
from pyjax._src.callback import host_arrays, runtime_error
from pyjax._src.core.effects import Effect
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.source_info import user_frames
from pyjax._src.transforms.staging import abstractify
from pyjax._src.tree_util import tree_flatten, tree_map, tree_unflatten

# named as JAX's logger, so that logging set up for JAX applies to pyjax's debug.log
logger = logging.getLogger("jax._src.debugging")


class DebugEffect(Effect):
    """The effect of a debug callback or print that need not keep its order."""
    __str__ = lambda self: "Debug"  # noqa: E731


class OrderedDebugEffect(Effect):
    """The effect of a debug callback or print ordered with the other ordered ones."""
    __str__ = lambda self: "OrderedDebug"  # noqa: E731


debug_effect = DebugEffect()
ordered_debug_effect = OrderedDebugEffect()


# ---------------------------------------------------------------------------------------------
# Rules shared by the debug primitives
# ---------------------------------------------------------------------------------------------

def _run(callback: Callable[..., Any], args: Sequence[Any], in_program: bool) -> list:
    """Call `callback(*args)`; a failure is logged, and inside a program reported as XLA
    reports a failed host callback."""
    try:
        callback(*args)
    except BaseException as e:
        logger.exception("jax.debug.callback failed")
        if in_program and isinstance(e, Exception):
            raise runtime_error(e) from e
        raise
    return []


def _debug_rules(prim: Primitive, host_fn: Callable[[dict], Callable[..., Any]]) -> None:
    """impl (inside compiled programs), eager, abstract_eval, jvp, transpose and batch rules of
    a debug primitive; `host_fn(params)` is the function called with the operands."""
    prim.impl = lambda *bufs, **params: _run(host_fn(params), host_arrays(bufs), True)
    # eagerly JAX calls the function from Python, outside any XLA program: no flushing
    prim.eager = lambda p, args, params: run_unflushed(
        _run, host_fn(params), [as_operand(a) for a in args], False)
    prim.abstract_eval = lambda *avals, **params: []
    prim.effectful = True
    prim.calls_python = True
    prim.jvp = lambda primals, tangents, **params: (prim.bind(*primals, **params), [])
    prim.transpose = lambda cts, *args, **params: [None] * len(args)
    prim.batch = lambda args, dims, **params: _unrolled_batch(prim, args, dims, params)


def _unrolled_batch(prim: Primitive, args: Sequence[Any], dims: Sequence[Any],
                    params: dict) -> tuple[list, list]:
    """One call per batch element (unbatched operands are passed whole to each)."""
    from pyjax._src.primitives.indexing import index_in_dim
    size = next(np.shape(a)[d] for a, d in zip(args, dims) if d is not None)
    for i in range(size):
        prim.bind(*[a if d is None else index_in_dim(a, i, d, keepdims=False)
                    for a, d in zip(args, dims)], **params)
    return [], []


# ---------------------------------------------------------------------------------------------
# debug_callback
# ---------------------------------------------------------------------------------------------

debug_callback_p = Primitive("debug_callback", multiple_results=True)
_debug_rules(debug_callback_p, lambda params: params["callback"])


def _split_callback_args(args: tuple, kwargs: dict) -> tuple[Any, list, dict]:
    """(structure of (args, kwargs), the leaves that are arrays, {position: other leaf})."""
    flat, in_tree = tree_flatten((args, kwargs))
    static, dynamic = {}, []
    for i, leaf in enumerate(flat):
        try:
            abstractify(leaf)
        except (AssertionError, TypeError):
            static[i] = leaf
            continue
        dynamic.append(leaf)
    return in_tree, dynamic, static


def _merge_callback_args(in_tree: Any, dynamic: Sequence[Any], static: dict) -> Any:
    it = iter(dynamic)
    return tree_unflatten(in_tree, [static[i] if i in static else next(it)
                                    for i in range(len(static) + len(dynamic))])


def debug_callback(callback: Callable[..., None] | None = None, *args: Any,
                   ordered: bool = False, partitioned: bool = False,
                   **kwargs: Any) -> Callable[..., None] | None:
    """Call `callback(*args, **kwargs)` for its side effects, also inside jit (when the
    program runs), vmap (per batch element) and grad (on primal values).  `ordered` keeps
    it in order with other ordered callbacks.  Two-call form:
    `debug_callback(ordered=True)(callback, *args, **kwargs)`."""
    def _debug_callback(callback: Callable[..., None], *c_args: Any, **c_kwargs: Any) -> None:
        if not callable(callback):
            raise TypeError("first argument to jax.debug.callback must be callable, but got "
                            f"an object of type {type(callback)}")
        in_tree, dynamic, static = _split_callback_args(c_args, c_kwargs)

        def _flat_callback(*dynamic_flat: Any) -> tuple:
            cb_args, cb_kwargs = _merge_callback_args(in_tree, dynamic_flat, static)
            callback(*cb_args, **cb_kwargs)
            return ()

        debug_callback_p.bind(*dynamic, callback=_flat_callback,
                              effect=ordered_debug_effect if ordered else debug_effect,
                              partitioned=partitioned)

    if callback is not None:
        _debug_callback(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError("debug_callback received unexpected arguments in the two-call form:"
                        f" {args=} {kwargs=}")
    return _debug_callback


# ---------------------------------------------------------------------------------------------
# debug_print / debug_log
# ---------------------------------------------------------------------------------------------

class _FormatChecker(string.Formatter):
    """Checks a format string against its arguments at trace time (formatting nothing)."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return ""

    def check_unused_args(self, used_args: Any, args: Sequence[Any], kwargs: dict) -> None:
        unused = [a for i, a in enumerate(args) if i not in used_args]
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")
        if unused_kw:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kw}. You may be "
                "passing an f-string (i.e, `f\"{x}\"`) into `jax.debug.print` and instead "
                "should pass in a regular string.")


_format_checker = _FormatChecker()


def _print_function(params: dict) -> Callable[..., None]:
    """The host function of a debug_print equation: format (or join) and print or log."""
    fmt, options = params["fmt"], dict(params["np_printoptions"])
    record = params["logging_record"]

    def emit(*dynamic: Any) -> None:
        args, kwargs = _merge_callback_args(params["in_tree"], dynamic,
                                            dict(params["static_args"]))
        if params["has_placeholders"]:
            with np.printoptions(**options):
                msg = fmt.format(*args, **kwargs)
        else:
            if kwargs:
                raise AssertionError("Format without placeholders should not have kwargs.")
            msg = " ".join((fmt, *(str(a) for a in args)))
        if record is None:
            sys.stdout.write(msg + "\n")
        else:
            logged = copy.copy(record)
            logged.msg = msg
            logger.handle(logged)
    return emit


debug_print_p = Primitive("debug_print", multiple_results=True)
_debug_rules(debug_print_p, _print_function)


def _logging_record(level: int) -> logging.LogRecord:
    """A record naming the user's line that called debug.log (filled with the message when
    the value is printed)."""
    frames = user_frames()
    file_name, line_no = (frames[0].file, frames[0].line) if frames else ("(unknown file)", 0)
    return logger.makeRecord(logger.name, level, file_name, line_no, "", (), None)


def debug_print(fmt: str | None = None, *args: Any, ordered: bool = False,
                partitioned: bool = False, skip_format_check: bool = False,
                _use_logging: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """Print `fmt.format(*args, **kwargs)` on the values, also inside jit (each time the
    program runs), vmap (per batch element) and grad (primal values); not for f-strings
    (formatting is delayed).  Two-call form: `debug_print(ordered=True)(fmt, *args)`."""
    def _debug_print(fmt: str, *c_args: Any, **c_kwargs: Any) -> None:
        if not skip_format_check:
            _format_checker.format(fmt, *c_args, **c_kwargs)
        has_placeholders = False
        if fmt:
            has_placeholders = next(iter(string.Formatter().parse(fmt)))[1] is not None
        in_tree, dynamic, static = _split_callback_args(c_args, c_kwargs)
        debug_print_p.bind(
            *dynamic, fmt=fmt, ordered=ordered, partitioned=partitioned, in_tree=in_tree,
            static_args=tuple(static.items()),
            np_printoptions=tuple(np.get_printoptions().items()),
            has_placeholders=has_placeholders,
            logging_record=_logging_record(logging.INFO) if _use_logging else None)

    if fmt is not None:
        _debug_print(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError("debug_print received unexpected arguments in the two-call form:"
                        f" {args=} {kwargs=}")
    return _debug_print


def debug_log(fmt: str | None = None, *args: Any, ordered: bool = False,
              partitioned: bool = False, skip_format_check: bool = False,
              **kwargs: Any) -> Callable[..., None] | None:
    """`debug_print`, but the message goes to the `jax._src.debugging` logger at INFO level,
    as a record naming the calling line."""
    return debug_print(fmt, *args, ordered=ordered, partitioned=partitioned,
                       skip_format_check=skip_format_check, _use_logging=True, **kwargs)


# ---------------------------------------------------------------------------------------------
# Shardings
# ---------------------------------------------------------------------------------------------

class GSPMDSharding:
    """What the compiler reports as the sharding of a value inside a jitted program on the
    one host device: replicated."""

    def __init__(self, devices: Sequence[Any]):
        self._devices = tuple(devices)

    @property
    def device_set(self) -> set:
        return set(self._devices)

    @property
    def memory_kind(self) -> str:
        return "device"

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def devices_indices_map(self, shape: Sequence[int]) -> dict:
        return {d: (slice(None),) * len(shape) for d in self._devices}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GSPMDSharding) and other._devices == self._devices

    def __hash__(self) -> int:
        return hash(self._devices)

    def __repr__(self) -> str:
        return "GSPMDSharding({replicated}, memory_kind=device)"


inspect_sharding_p = Primitive("inspect_sharding", multiple_results=True)
inspect_sharding_p.impl = lambda value, *, callback: []  # it ran when the program compiled
inspect_sharding_p.abstract_eval = lambda aval, **_: []
inspect_sharding_p.effectful = True  # kept until compiled, as JAX's effect keeps it


def _inspect_eager(prim: Primitive, args: tuple, params: dict) -> list:
    value, = args
    params["callback"](value.sharding)
    return []


def _inspect_at_compile(eqn: Any) -> None:
    """Inside jit the sharding is known when the program is compiled: call back then."""
    from pyjax._src.parallel.devices import default_device
    eqn.params["callback"](GSPMDSharding([default_device()]))


inspect_sharding_p.eager = _inspect_eager
inspect_sharding_p.lowering = _inspect_at_compile
inspect_sharding_p.jvp = lambda primals, tangents, **params: (
    inspect_sharding_p.bind(*primals, **params), [])
inspect_sharding_p.batch = lambda args, dims, **params: (
    inspect_sharding_p.bind(*args, **params), [])


def inspect_array_sharding(value: Any, *, callback: Callable[[Any], None]) -> None:
    """Call `callback` with the sharding of each array in the pytree `value`: at once when
    eager, when the program is compiled inside jit (once per compilation)."""
    tree_map(lambda leaf: inspect_sharding_p.bind(leaf, callback=callback), value)


def visualize_sharding(shape: Sequence[int], sharding: Any, *, use_color: bool = True,
                       scale: float = 1., min_width: int = 9, max_width: int = 80,
                       color_map: Any = None) -> None:
    """Draw which device holds which block of an array of `shape` (needs `rich`)."""
    if importlib.util.find_spec("rich") is None:
        raise ValueError("`visualize_sharding` requires `rich` to be installed.")
    from pyjax._src.sharding_view import draw_sharding
    draw_sharding(shape, sharding, use_color=use_color, scale=scale, min_width=min_width,
                  max_width=max_width, color_map=color_map)


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """Draw the sharding of `arr` (see `visualize_sharding`)."""
    inspect_array_sharding(arr, callback=lambda s: visualize_sharding(arr.shape, s, **kwargs))
