"""`check`: the effectful primitive a user assertion binds, with its rules, and the public
`check`, `debug_check` and `check_error`.

`check` holds an Error (its leaves as operands, its treedef as `err_tree`).  Eagerly it raises
JaxRuntimeError when the error happened; under vmap the batch is reduced to one error first;
under differentiation it checks the primal values.  Inside a compiled program it cannot run:
running it raises JAX's "not functionalized" ValueError, unless it is a `debug_check`, which
then does nothing.  `checkify` removes check equations by turning them into error values.
"""
from __future__ import annotations

from typing import Any, Sequence

import os
import sys

import numpy as np

import pyjax.numpy as jnp
from pyjax._src import tree_util as jtu
from pyjax._src.callback import host_arrays
from pyjax._src.checkify.errors import (
    Error, FailedCheckError, JaxRuntimeError, assert_func, get_traceback, init_error)
from pyjax._src.core.array import Array
from pyjax._src.core.jaxpr import pp_eqn_standard
from pyjax._src.core.primitive import Primitive
from pyjax._src.transforms import batching

check_p = Primitive("check", multiple_results=True)
check_p.effectful = True

_FUNCTIONALIZATION_MESSAGE = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This probably "
    "means you tried to stage (jit/scan/pmap/...) a `check` without functionalizing it "
    "through `checkify.checkify`.")


def _raise_if_failed(error: Error) -> None:
    exc = error.get_exception()
    if exc:
        raise JaxRuntimeError(str(exc)) from exc


def _check_eager(prim: Primitive, args: tuple, params: dict) -> list:
    if not params["debug"]:
        _raise_if_failed(jtu.tree_unflatten(params["err_tree"], args))
    return []


def _check_impl(*bufs: np.ndarray, err_tree: Any, debug: bool) -> list:
    """A check that runs inside a compiled program: JAX cannot lower one that was staged
    without checkify (its "not functionalized" ValueError), so neither runs it here; inside
    a body JAX evaluates op by op (an eager custom_jvp/custom_vjp call or checkpoint, which
    pyjax compiles) it is the eager check.  A debug check does nothing."""
    if debug:
        return []
    if _in_program():
        raise ValueError(_FUNCTIONALIZATION_MESSAGE)
    _raise_if_failed(jtu.tree_unflatten(err_tree, host_arrays(bufs)))
    return []


_SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PROGRAM_CODE = (os.path.join(_SRC, "transforms", "jit.py"),
                 os.path.join(_SRC, "primitives", "control_flow") + os.sep)


def _in_program() -> bool:
    """Is a jit program, or control flow (which JAX compiles even when run eagerly), running?"""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.startswith(_PROGRAM_CODE):
            return True
        frame = frame.f_back
    return False


def _check_batch(vals: Sequence[Any], dims: Sequence[Any], *, err_tree: Any, debug: bool
                 ) -> tuple[list, list]:
    size = next(np.shape(v)[d] for v, d in zip(vals, dims) if d is not None)
    vals = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    check_error_value(jtu.tree_unflatten(err_tree, vals), debug=debug)
    return [], []


def _check_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, err_tree: Any, debug: bool
               ) -> tuple[list, list]:
    check_p.bind(*primals, err_tree=err_tree, debug=debug)
    return [], []


check_p.eager = _check_eager
check_p.impl = _check_impl
check_p.abstract_eval = lambda *avals, **params: []
check_p.batch = _check_batch
check_p.jvp = _check_jvp
check_p.pp_rule = lambda eqn, context: pp_eqn_standard(eqn, context, ["debug"])


# ---------------------------------------------------------------------------------------------
# Binding an error
# ---------------------------------------------------------------------------------------------

def _reduce_any_error(error: Error) -> Error:
    """One error out of a batch of them: per effect, the last batch element that failed
    (JAX's choice: the end of a stable argsort of the predicates)."""
    out = init_error
    for effect in error._pred:
        preds, codes, payload = error._pred[effect], error._code[effect], error._payload[effect]
        if not np.shape(preds):  # this effect's error was not batched
            out = out._update(effect, preds, codes, {}, payload)
            continue
        idx = jnp.argsort(preds)[-1]
        n = np.shape(preds)[0]
        # a leaf without the batch axis (a payload the batch did not vary) is the same for all
        pick = lambda x, i=idx: x[i] if np.ndim(x) and np.shape(x)[0] == n else x  # noqa: E731
        pred, code, payload = jtu.tree_map(pick, (preds, codes, payload))
        out = out._update(effect, pred, code, {}, payload)
    return out._replace(_metadata=error._metadata)


def check_error_value(error: Error, *, debug: bool = False) -> None:
    """Bind `check` on `error` (reduced to one error first when its predicates are batched)."""
    if any(np.shape(p) for p in error._pred.values()):
        error = _reduce_any_error(error)
    leaves, tree = jtu.tree_flatten(error)
    check_p.bind(*leaves, err_tree=tree, debug=debug)


def _is_scalar_pred(pred: Any) -> bool:
    return isinstance(pred, bool) or (isinstance(pred, Array) and pred.shape == ()
                                      and pred.dtype == np.dtype("bool"))


def _check(pred: Any, msg: str, debug: bool, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    if not _is_scalar_pred(pred):
        name = "debug_check" if debug else "check"
        raise TypeError(f"{name} takes a scalar pred as argument, got {pred}")
    for arg in jtu.tree_leaves((fmt_args, fmt_kwargs)):
        if not isinstance(arg, (Array, np.ndarray)):
            raise TypeError("Formatting arguments to checkify.check need to be PyTrees of "
                            f"arrays, but got {arg!r} of type {type(arg)}.")
    new_error = FailedCheckError(get_traceback(), msg, *fmt_args, **fmt_kwargs)
    check_error_value(assert_func(init_error, jnp.logical_not(pred), new_error), debug=debug)


def check(pred: Any, msg: str, *fmt_args: Any, debug: bool = False, **fmt_kwargs: Any) -> None:
    """Fail with `msg.format(*fmt_args, **fmt_kwargs)` where the scalar `pred` is False: raises
    JaxRuntimeError when run eagerly; must be functionalized by `checkify` to be staged."""
    _check(pred, msg, debug, *fmt_args, **fmt_kwargs)


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """A `check` that only acts under `checkify`; anywhere else it does nothing."""
    _check(pred, msg, True, *fmt_args, **fmt_kwargs)


def check_error(error: Error) -> None:
    """Raise JaxRuntimeError if `error` failed; `checkify` turns it back into an error value."""
    if not isinstance(error, Error):
        raise TypeError("check_error takes an Error as argument, "
                        f"got type {type(error)} instead.")
    check_error_value(error, debug=False)
