"""Generated code that calls primitives' specialised impls: the contract eager plans and tier 0
share.

A primitive's `specialize(*avals, **params)` rule may give the impl for operands of those
types with the params bound (work that depends on them done once), or None.  Generated code
(eager plans, tier 0's run function) then writes `outs = name(*args)` instead of the impl
call.  Operands must be ndarrays of their abstract values' dtypes.  One marked `exact` returns
an ndarray of the result's dtype for every such operand, so its result is taken as it is;
other impls may return NumPy scalars or another dtype, which the code converts (a `Step`'s
`checked` results).  An exact impl may also carry

    broadcasts      the impl for an operand with a zero stride (a broadcast), which the code
                    calls instead when its one operand has one
    loud            (an impl made by `quietly`) the impl it runs with NumPy's errors off,
                    which the code calls between its own switches of the error state
    keepdims        (a reduction) the same reduction keeping the reduced axes, an exact impl
                    with attribute `shape` (eager plans call it for jnp's keepdims=True)
    reshapes_to     (a reshape) the shape it gives

A specialised impl that is a functools.partial is called through its function, its bound
arguments written into the line (a partial merges its keywords into a new dict per call).
"""
from __future__ import annotations

import functools
import keyword
from typing import Any, Callable

import numpy as np

from pyjax._src.primitives import _fp

#: the names a step's lines use besides its own: put them in the generated code's globals
NAMESPACE = {"ndarray": np.ndarray, "asarray": np.asarray, "errstate": _fp.ERRSTATE,
             "IGNORE_ALL": _fp.IGNORE_ALL}


def exact(impl: Callable) -> Callable:
    """Mark a specialised impl (a function or functools.partial) as returning an ndarray of
    the result's dtype for every operand of the types it was made for (see module doc)."""
    impl.exact = True
    return impl


class Step:
    """One primitive call in generated code: `outs = name(*args)` (`special`: the specialised
    impl `name` is, if any), and the results whose NumPy type the code checks against
    `D_<result>` (a dtype in the namespace)."""

    __slots__ = ("name", "special", "args", "outs", "multiple", "checked")

    def __init__(self, name: str, special: Any, args: list, outs: list, multiple: bool,
                 checked: list):
        self.name, self.special, self.args, self.outs = name, special or None, args, outs
        self.multiple, self.checked = multiple, checked

    def source(self, namespace: dict) -> list[str]:
        """The step's lines; names the call needs beyond `name` are added to `namespace`."""
        target = ", ".join(self.outs) + ("," if self.multiple else "")
        args = ", ".join(self.args)
        if getattr(self.special, "broadcasts", None) is not None:  # (one operand)
            lines = [f"    {target} = {_spelt_out(self.name, self.special, args, namespace)} "
                     f"if 0 not in {args}.strides else {self.name}.broadcasts({args})"]
        elif getattr(self.special, "loud", None) is not None:
            loud = namespace[f"{self.name}_loud"] = self.special.loud
            lines = ["    token = errstate.set(IGNORE_ALL)", "    try:",
                     f"        {target} = {_spelt_out(f'{self.name}_loud', loud, args, namespace)}",
                     "    finally:", "        errstate.reset(token)"]
        else:
            lines = [f"    {target} = {_spelt_out(self.name, self.special, args, namespace)}"]
        return lines + checks(self.checked)


def checks(names: list[str]) -> list[str]:
    """Lines making each of `names` an ndarray of the dtype `D_<name>` of the namespace (a
    NumPy call may have given a NumPy scalar or another dtype)."""
    return [f"    if {name}.__class__ is not ndarray or {name}.dtype != D_{name}: "
            f"{name} = asarray({name}, D_{name})" for name in names]


def _spelt_out(name: str, impl: Any, args: str, namespace: dict) -> str:
    """The call of impl `name` on `args`, a functools.partial's bound arguments written into
    the call (a reduction's `axis=`): a partial merges its keywords into a new dict per call,
    which costs a small reduction a fifth of its time."""
    if type(impl) is not functools.partial or not all(
            k.isidentifier() and not keyword.iskeyword(k) for k in impl.keywords):
        return f"{name}({args})"
    namespace[f"{name}_func"] = impl.func
    bound = []
    for i, value in enumerate(impl.args):
        namespace[f"{name}_arg{i}"] = value
        bound.append(f"{name}_arg{i}")
    bound.append(args)
    for k, value in impl.keywords.items():
        namespace[f"{name}_kw_{k}"] = value
        bound.append(f"{k}={name}_kw_{k}")
    return f"{name}_func({', '.join(bound)})"
