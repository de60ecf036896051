"""Host callbacks: `pure_callback` (a pure Python function computing arrays; it may be dropped
when unused, or run once per batch element) and `io_callback` (an impure one: always run, in
program order when `ordered`).

Inside a jitted function the callback runs when the compiled program runs, on Arrays built from
the program's buffers; its results are checked against `result_shape_dtypes` as XLA's host
callbacks check them, and any failure surfaces as JAX's `JaxRuntimeError` ("INTERNAL:
CpuCallback error calling callback: ..."), eagerly as under jit (JAX runs an eager callback
through a compiled program too).
"""
from __future__ import annotations

import dataclasses
import logging
import os
import sys
import traceback
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src import errors
from pyjax._src.backend.dispatch import apply_primitive
from pyjax._src.core import dtypes
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.transforms import batching
from pyjax._src.tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten

# named as JAX's loggers, so that logging set up for JAX applies to pyjax's callbacks
logger = logging.getLogger("jax._src.callback")

_PYJAX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclasses.dataclass(frozen=True, slots=True, weakref_slot=True)
class _FlatCallback:
    """The user's callback taking and returning flat lists of arrays: a param of the callback
    primitives (equal for equal functions and argument structures, so traces are reused)."""
    callback_func: Callable[..., Any]
    in_tree: Any  # the (args, kwargs) PyTreeDef of `callback_func`'s arguments

    def __call__(self, *flat_args: Any) -> list:
        args, kwargs = tree_unflatten(self.in_tree, flat_args)
        return tree_leaves(self.callback_func(*args, **kwargs))


# ---------------------------------------------------------------------------------------------
# Running a callback on the host
# ---------------------------------------------------------------------------------------------

def host_arrays(bufs: Sequence[np.ndarray]) -> list[ArrayImpl]:
    """The Arrays a callback receives for a compiled program's buffers (never weakly typed)."""
    return [ArrayImpl(np.asarray(b), False) for b in bufs]


def runtime_error(exc: BaseException) -> errors.JaxRuntimeError:
    """XLA's report of a host callback that raised: the Python traceback (pyjax's own frames
    and its generated programs' frames left out, each frame named without its source line)
    under an INTERNAL status."""
    frames = traceback.extract_stack(sys._getframe(2)) + traceback.extract_tb(exc.__traceback__)
    lines = "".join(f'  File "{f.filename}", line {f.lineno}, in {f.name}\n' for f in frames
                    if not f.filename.startswith((_PYJAX_DIR, "<jaxpr ")))
    text = "".join(traceback.format_exception_only(type(exc), exc)).rstrip("\n")
    err = errors.JaxRuntimeError("INTERNAL: CpuCallback error calling callback: Traceback "
                                 f"(most recent call last):\n{lines}{text}")
    err.__cause__ = exc
    return err


def _checked_results(outs: Sequence[Any], result_avals: Sequence[ShapedArray]) -> list:
    """The callback's results as canonical NumPy arrays, checked against the declared types
    with the errors XLA's callback wrapper raises."""
    if len(outs) != len(result_avals):
        raise RuntimeError("Mismatched number of outputs from callback. "
                           f"Expected: {len(result_avals)}, Actual: {len(outs)}")
    checked = []
    for i, (out, aval) in enumerate(zip(outs, result_avals)):
        out = np.asarray(out)
        out = out.astype(dtypes.canonicalize_dtype(out.dtype), copy=False)
        if out.shape != aval.shape:
            raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                               f"Expected: {aval.shape}, Actual: {out.shape}")
        if out.dtype != aval.dtype:
            raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                               f"Expected: {aval.dtype}, Actual: {out.dtype}")
        checked.append(out)
    return checked


def _make_callback_impl(what: str) -> Callable[..., list]:
    """The impl of a callback primitive that returns arrays (`what` names it in the log)."""
    def impl(*bufs: np.ndarray, callback: _FlatCallback, result_avals: tuple,
             **_: Any) -> list:
        try:
            try:
                outs = tree_map(np.asarray, callback(*host_arrays(bufs)))
            except BaseException:
                logger.exception(f"{what} failed")
                raise
            return _checked_results(outs, result_avals)
        except Exception as e:  # noqa: BLE001 - the host reports any failure the same way
            raise runtime_error(e) from e
    return impl


def _result_avals(result_shape_dtypes: Any) -> tuple[list[ShapedArray], Any]:
    """Flat avals of the declared results, refusing 64-bit types that x64 mode does not allow."""
    def aval(x: Any) -> ShapedArray:
        dt = np.dtype(x.dtype)
        if dtypes.canonicalize_dtype(dt) != dt:
            raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                             "`jax_enable_x64` is disabled")
        return ShapedArray(tuple(x.shape), dt)
    return tree_flatten(tree_map(aval, result_shape_dtypes))


def _callback_abstract_eval(*avals: ShapedArray, result_avals: tuple, **_: Any) -> list:
    return list(result_avals)


# ---------------------------------------------------------------------------------------------
# pure_callback
# ---------------------------------------------------------------------------------------------

pure_callback_p = Primitive("pure_callback", multiple_results=True)
pure_callback_p.calls_python = True
pure_callback_p.impl = _make_callback_impl("jax.pure_callback")
pure_callback_p.abstract_eval = _callback_abstract_eval
pure_callback_p.eager = apply_primitive  # params hold functions: no abstract-eval cache


def _pure_callback_jvp(primals: Any, tangents: Any, **params: Any) -> Any:
    raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                     "callbacks while taking gradients.")


def _pure_callback_transpose(cts: Any, *args: Any, **params: Any) -> Any:
    raise ValueError("Pure callbacks do not support transpose. Please use `jax.custom_vjp` to "
                     "use callbacks while taking gradients.")


pure_callback_p.jvp = _pure_callback_jvp
pure_callback_p.transpose = _pure_callback_transpose


def _map_over_batch(prim: Primitive, args: Sequence[Any], dims: Sequence[Any],
                    unroll: bool, **params: Any) -> list:
    """Bind `prim` once per batch element inside a scan over the batched operands (the
    unbatched ones are closed over): the batch axis of every result is 0."""
    from pyjax._src.primitives.control_flow.scan import scan
    is_batched = [d is not None for d in dims]
    batched = [a for a, b in zip(args, is_batched) if b]
    length = next(np.shape(a)[0] for a in batched)

    def body(carry: Any, xs: list) -> tuple:
        it = iter(xs)
        return carry, prim.bind(*[next(it) if b else a for a, b in zip(args, is_batched)],
                                **params)
    _, outs = scan(body, (), batched, unroll=length if unroll else 1)
    return outs


def _pure_callback_batch(args: Sequence[Any], dims: Sequence[Any], *, vmap_method: str | None,
                         result_avals: tuple, **params: Any) -> tuple:
    """JAX's batching of foreign calls, chosen by `vmap_method` (see `pure_callback`)."""
    from pyjax._src.primitives.shape import broadcast
    size = next(np.shape(a)[d] for a, d in zip(args, dims) if d is not None)
    args = [a if d is None else batching.move_axis(a, d, 0) for a, d in zip(args, dims)]
    batched_avals = tuple(ShapedArray((size, *a.shape), a.dtype) for a in result_avals)
    if vmap_method == "legacy_vectorized":
        outs = pure_callback_p.bind(*args, vmap_method=vmap_method, result_avals=batched_avals,
                                    **params)
    elif vmap_method in ("expand_dims", "broadcast_all"):
        lead = size if vmap_method == "broadcast_all" else 1
        args = [broadcast(a, (lead,)) if d is None else a for a, d in zip(args, dims)]
        outs = pure_callback_p.bind(*args, vmap_method=vmap_method, result_avals=batched_avals,
                                    **params)
    elif vmap_method in ("sequential", "sequential_unrolled"):
        outs = _map_over_batch(pure_callback_p, args, dims,
                               vmap_method == "sequential_unrolled", vmap_method=vmap_method,
                               result_avals=result_avals, **params)
    else:
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got {vmap_method=}.")
    return list(outs), [0] * len(outs)


pure_callback_p.batch = _pure_callback_batch

_VMAP_METHODS = ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized", None]


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None, **kwargs: Any) -> Any:
    """Call the pure Python function `callback(*args, **kwargs)` on the host, also inside
    jit: it gets Arrays and returns arrays matching the pytree of shape/dtype leaves
    `result_shape_dtypes`.  Being pure, it may be skipped when its results are unused.
    Under vmap, `vmap_method` says how: 'sequential' (a loop calling it per batch element),
    'sequential_unrolled' (the loop unrolled), 'expand_dims' (unbatched arguments get a
    leading axis of size 1), 'broadcast_all' (of the batch size), 'legacy_vectorized'
    (batched arguments only); None refuses vmap.  It has no derivative (wrap it in
    custom_jvp/custom_vjp to differentiate)."""
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {_VMAP_METHODS}, "
                         f"but got: {vmap_method}")
    flat_args, in_tree = tree_flatten((args, kwargs))
    flat_avals, out_tree = _result_avals(result_shape_dtypes)
    outs = pure_callback_p.bind(*flat_args, callback=_FlatCallback(callback, in_tree),
                                result_avals=tuple(flat_avals), sharding=sharding,
                                vmap_method=vmap_method)
    return tree_unflatten(out_tree, outs)


# ---------------------------------------------------------------------------------------------
# io_callback
# ---------------------------------------------------------------------------------------------

io_callback_p = Primitive("io_callback", multiple_results=True)
io_callback_p.impl = _make_callback_impl("jax.io_callback")
io_callback_p.abstract_eval = _callback_abstract_eval
io_callback_p.eager = apply_primitive
io_callback_p.calls_python = True
io_callback_p.effectful = True  # never dropped, even when its results are unused


def _io_callback_jvp(primals: Any, tangents: Any, **params: Any) -> Any:
    raise ValueError("IO callbacks do not support JVP.")


def _io_callback_transpose(cts: Any, *args: Any, **params: Any) -> Any:
    raise ValueError("IO callbacks do not support transpose.")


def _io_callback_batch(args: Sequence[Any], dims: Sequence[Any], *, ordered: bool,
                       **params: Any) -> tuple:
    """One call per batch element, in a loop (an ordered callback cannot be batched)."""
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    args = [a if d is None else batching.move_axis(a, d, 0) for a, d in zip(args, dims)]
    outs = _map_over_batch(io_callback_p, args, dims, False, ordered=False, **params)
    return list(outs), [0] * len(outs)


io_callback_p.jvp = _io_callback_jvp
io_callback_p.transpose = _io_callback_transpose
io_callback_p.batch = _io_callback_batch


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding: Any = None, ordered: bool = False, **kwargs: Any) -> Any:
    """Call the impure Python function `callback(*args, **kwargs)` on the host, also inside
    jit, where it is never dropped; `ordered` keeps it in order with other ordered effects
    (and forbids vmap).  Results as for `pure_callback`; no derivative."""
    flat_args, in_tree = tree_flatten((args, kwargs))
    flat_avals, out_tree = _result_avals(result_shape_dtypes)
    outs = io_callback_p.bind(*flat_args, callback=_FlatCallback(callback, in_tree),
                              result_avals=tuple(flat_avals), sharding=sharding,
                              ordered=ordered)
    return tree_unflatten(out_tree, outs)
