"""`jax.api_util`: the helpers libraries use to build transformations out of WrappedFuns
(flattening pytrees in and out, static arguments, debug info)."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

from pyjax._src.compat.extend_core import DebugInfo
from pyjax._src.compat.linear_util import WrappedFun, transformation2, transformation_with_aux2
from pyjax._src.core.avals import ShapedArray
from pyjax._src.transforms.staging import DebugInfo as _StagingDebugInfo
from pyjax._src.transforms.staging import abstractify
from pyjax._src.tree_util import tree_flatten, tree_unflatten


def _flatten_both(call: Callable, store: Any, in_tree: Any, *args_flat: Any) -> list:
    args, kwargs = tree_unflatten(in_tree, args_flat)
    leaves, out_tree = tree_flatten(call(*args, **kwargs))
    store.store(out_tree)
    return leaves


def _flatten_args(call: Callable, store: Any, in_tree: Any, *args_flat: Any) -> list:
    leaves, out_tree = tree_flatten(call(*tree_unflatten(in_tree, args_flat)))
    store.store(out_tree)
    return leaves


def flatten_fun(f: WrappedFun, in_tree: Any) -> tuple[WrappedFun, Callable]:
    """`f(*args, **kwargs)` as a function of the leaves of `(args, kwargs)` (treedef
    `in_tree`) returning its output's leaves; the thunk gives the output treedef."""
    return transformation_with_aux2(_flatten_both)(f, in_tree)


def flatten_fun_nokwargs(f: WrappedFun, in_tree: Any) -> tuple[WrappedFun, Callable]:
    """Like flatten_fun for positional arguments only (`in_tree` is the args tuple's)."""
    return transformation_with_aux2(_flatten_args)(f, in_tree)


def _partial_args(call: Callable, positions: tuple, static: tuple, *dyn: Any) -> Any:
    args, dyn_iter = list(static), iter(dyn)
    for i in positions:
        args[i] = next(dyn_iter)
    return call(*args)


def argnums_partial(f: WrappedFun, dyn_argnums: Sequence[int], args: Sequence[Any],
                    require_static_args_hashable: bool = True) -> tuple[WrappedFun, tuple]:
    """`f` with the arguments not in `dyn_argnums` fixed to their values in `args`."""
    positions = tuple(dyn_argnums)
    return (transformation2(_partial_args)(f, positions, tuple(args)),
            tuple(args[i] for i in positions))


def flatten_axes(name: str, treedef: Any, axis_tree: Any, *, kws: bool = False,
                 tupled_args: bool = False) -> list:
    """`axis_tree` (a prefix of the tree `treedef` describes) broadcast to one entry per
    leaf, as vmap does with `in_axes`; raises ValueError naming `name` when not a prefix."""
    from pyjax._src.transforms.batching import _broadcast_prefix
    tree = tree_unflatten(treedef, [object()] * treedef.num_leaves)
    if kws:
        tree = (tree, {}) if not isinstance(tree, tuple) else tree
    return _broadcast_prefix(axis_tree, tree, name)


def shaped_abstractify(x: Any) -> ShapedArray:
    return abstractify(x)


def safe_map(f: Callable, *args: Sequence[Any]) -> list:
    n = len(args[0])
    for arg in args[1:]:
        if len(arg) != n:
            raise ValueError(f"length mismatch: {list(map(len, args))}")
    return list(map(f, *args))


def debug_info(traced_for: str, fun: Callable, args: Sequence[Any], kwargs: dict, *,
               static_argnums: Sequence[int] = (), static_argnames: Sequence[str] = (),
               result_paths_thunk: Callable | None = None, sourceinfo: str | None = None,
               signature: inspect.Signature | None = None) -> DebugInfo:
    """What `fun` is traced for and the names of its flattened arguments."""
    staging = _StagingDebugInfo(traced_for, fun, tuple(args), dict(kwargs), static_argnums,
                                static_argnames)
    return DebugInfo(traced_for, sourceinfo or staging.func_src_info(), staging.arg_names(),
                     result_paths_thunk)


def donation_vector(donate_argnums: Sequence[int], donate_argnames: Sequence[str],
                    in_tree: Any, kws: bool = True) -> tuple[bool, ...]:
    """Per flattened argument, whether it is donated (by position or, with kws, by name)."""
    tree = tree_unflatten(in_tree, [object()] * in_tree.num_leaves)
    args, kwargs = tree if kws else (tree, {})
    count = lambda subtree: len(tree_flatten(subtree)[0])  # noqa: E731
    flags: list[bool] = []
    for i, arg in enumerate(args):
        flags += [i in donate_argnums] * count(arg)
    for key in sorted(kwargs):
        flags += [key in donate_argnames] * count(kwargs[key])
    return tuple(flags)


def rebase_donate_argnums(donate_argnums: Sequence[int], static_argnums: Sequence[int]
                          ) -> tuple[int, ...]:
    """Donated positions counted among the dynamic arguments only."""
    static = sorted(static_argnums)
    if set(donate_argnums) & set(static):
        raise ValueError(f"`static_argnums` {tuple(static)} and `donate_argnums` "
                         f"{tuple(donate_argnums)} cannot intersect.")
    return tuple(i - sum(s < i for s in static) for i in sorted(donate_argnums))


__all__ = ["argnums_partial", "debug_info", "donation_vector", "flatten_axes", "flatten_fun",
           "flatten_fun_nokwargs", "rebase_donate_argnums", "safe_map", "shaped_abstractify"]
