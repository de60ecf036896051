"""A jitted call as one generated function: argument buffers in, the result pytree out.

jit's cached call on Arrays runs the executable with subnormals flushed (fp_mode) and wraps
each output buffer as an Array of its abstract value's dtype and weak type.  What varies per
call is only the buffers, so `make_caller` writes that work out once per compiled entry as
straight-line Python, for the executable's positional run function:

    def call(a0):
        if flush_on(KEPT) is SWITCHED: ...run(a0) with flushing switched off after...
        o0, = run(a0)
        if o0.__class__ is not ndarray or o0.dtype is not D0: r0 = wrap(o0, A0)
        else: r0 = new(ArrayImpl); r0._buf = o0; r0._weak = False ...
        return r0

An output the run function returns as an ndarray of the expected dtype object becomes an Array
without a constructor call; anything else (a NumPy scalar, another dtype, an extended dtype,
a result too big for memory) goes through `dispatch.wrap`, as the general path does.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.backend import dispatch
from pyjax._src.backend.fp_mode import KEPT, SWITCHED, flush_off, flush_on
from pyjax._src.core import array as array_lib
from pyjax._src.core.array import ArrayImpl
from pyjax._src.tree_util import PyTreeDef, _flat_tuple_treedef, tree_unflatten


def make_caller(run: Callable, n_inputs: int, out_avals: Sequence[Any], out_tree: PyTreeDef,
                numpy_args: bool = False) -> Callable:
    """`call(*buffers)`: `run(*buffers)` flushing subnormals, its outputs as the Arrays of
    `out_avals` in the pytree `out_tree`.  With `numpy_args`, `call(args, *buffers)` where
    `args` holds NumPy arrays among the buffers: an output that may be a view of one of them
    is copied first (dispatch.detach), so no Array aliases a caller's array."""
    namespace: dict[str, Any] = {
        "run": run, "flush_on": flush_on, "flush_off": flush_off, "KEPT": KEPT,
        "SWITCHED": SWITCHED, "ndarray": np.ndarray, "new": object.__new__,
        "ArrayImpl": ArrayImpl, "array_lib": array_lib, "wrap": dispatch.wrap,
        "detach": dispatch.detach, "tree": out_tree, "unflatten": tree_unflatten}
    args = ", ".join(f"a{i}" for i in range(n_inputs))
    outs = [f"o{j}" for j in range(len(out_avals))]
    target = f"{', '.join(outs)}," if outs else "_"
    lines = [f"def call({'args, ' if numpy_args else ''}{args}):",
             "    if flush_on(KEPT) is SWITCHED:",
             "        try:",
             f"            {target} = run({args})",
             "        finally:",
             "            flush_off()",
             "    else:",
             f"        {target} = run({args})"]
    if numpy_args and outs:  # (an output owning its memory aliases only by being an input)
        views = " or ".join(
            f"({o}.__class__ is ndarray and ({o}.base is not None"
            + "".join(f" or {o} is a{i}" for i in range(n_inputs)) + "))" for o in outs)
        lines += [f"    if {views}:",
                  f"        {target} = detach([{', '.join(outs)}], args, True)"]
    results = []
    for j, aval in enumerate(out_avals):
        namespace[f"A{j}"] = aval
        o, r = f"o{j}", f"r{j}"
        results.append(r)
        dtype = getattr(aval, "dtype", None)  # (tokens have none)
        if not isinstance(dtype, np.dtype) or aval.size * dtype.itemsize > dispatch._MEMORY_BYTES:
            lines.append(f"    {r} = wrap({o}, A{j})")
            continue
        namespace[f"D{j}"] = dtype
        lines += [f"    if {o}.__class__ is not ndarray or {o}.dtype is not D{j}:",
                  f"        {r} = wrap({o}, A{j})",
                  "    else:",
                  f"        {r} = new(ArrayImpl)",
                  f"        {r}._buf = {o}",
                  f"        {r}._weak = {bool(aval.weak_type)}",
                  f"        {r}._sharding = None",
                  "        if array_lib.layout_hook is not None:",
                  f"            array_lib.layout_hook({r})"]
    if out_tree.node_data() is None and len(results) == 1:  # the result is one leaf
        lines.append(f"    return {results[0]}")
    elif out_tree == _flat_tuple_treedef(len(results)):
        lines.append(f"    return ({', '.join(results)}{',' if len(results) == 1 else ''})")
    else:
        lines.append(f"    return unflatten(tree, [{', '.join(results)}])")
    exec(compile("\n".join(lines), "<jit call>", "exec"), namespace)
    return namespace["call"]
