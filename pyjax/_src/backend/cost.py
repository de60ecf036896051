"""Cost and memory estimates of a jaxpr, for `jax.stages` (`cost_analysis`, `memory_analysis`).

pyjax has no XLA, so the numbers follow XLA's HloCostAnalysis conventions applied to the jaxpr:
one flop per element of an elementwise op (two per multiply-add of a dot_general), one
transcendental per element of exp/log/sin/..., `in - out` flops per reduction.  Bytes are
counted per equation (operands and results) for a lowering, and, as XLA fuses elementwise
work, only at the program's boundary and around dot products for a compiled program.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

from pyjax._src.core import dtypes
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Literal

#: one transcendental per output element (XLA's transcendental opcodes)
_TRANSCENDENTAL = frozenset({
    "exp", "log", "log1p", "expm1", "pow", "sqrt", "rsqrt", "cbrt", "tanh", "sin", "cos",
    "tan", "atan2", "erf"})

#: (flops, transcendentals) per output element of ops JAX lowers to a few HLO ops
_EXPANDED = {"exp2": (1, 1), "logistic": (3, 1), "fused_multiply_add": (2, 0)}

#: one flop per output element
_ELEMENTWISE = frozenset({
    "add", "sub", "mul", "div", "rem", "max", "min", "neg", "abs", "sign", "floor", "ceil",
    "round", "and", "or", "xor", "not", "eq", "ne", "lt", "le", "gt", "ge", "select_n",
    "convert_element_type", "clamp", "square", "nextafter", "shift_left",
    "shift_right_logical", "shift_right_arithmetic", "is_finite", "population_count", "clz",
    "real", "imag", "conj", "complex", "add_any"})

#: in.size - out.size flops (one combining op per element folded in)
_REDUCTIONS = frozenset({
    "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or",
    "reduce_xor"})

#: ops XLA does not fuse into their consumers: their results are written and read back
_MATERIALIZED = frozenset({"dot_general", "conv_general_dilated"})


def _size(aval: Any) -> int:
    return math.prod(aval.shape)


def _bytes(aval: Any) -> int:
    dtype = getattr(aval, "dtype", None)
    if dtype is None or dtype == dtypes.float0:  # (a token holds no data)
        return 0
    if isinstance(dtype, dtypes.ExtendedDType):  # a key array: its key data's bytes
        return _size(aval) * dtype.itemsize
    return _size(aval) * max(dtypes.itemsize_bits(dtype) // 8, 1)


def _multiplies(y: int) -> int:
    """Multiplies in XLA's binary exponentiation of x**y (y > 0)."""
    y = abs(y)
    return max(y.bit_length() - 1 + bin(y).count("1") - 1, 0)


def _eqn_ops(eqn: Any, fold: bool, const_in: list[bool]) -> tuple[float, float]:
    """(flops, transcendentals) of one equation, recursing into the jaxprs it calls."""
    name = eqn.primitive.name
    n = sum(_size(v.aval) for v in eqn.outvars)
    if name == "jit":
        return jaxpr_ops(eqn.params["jaxpr"].jaxpr, fold, const_in)
    if name in _TRANSCENDENTAL:
        return 0.0, float(n)
    if name in _EXPANDED:
        f, t = _EXPANDED[name]
        return float(f * n), float(t * n)
    if name == "convert_element_type" and eqn.invars[0].aval.dtype == eqn.params["new_dtype"]:
        return 0.0, 0.0  # emits no HLO op
    if name in _ELEMENTWISE:
        return float(n), 0.0
    if name == "integer_pow":
        return float(n * _multiplies(eqn.params["y"])), 0.0
    if name in _REDUCTIONS:
        return float(_size(eqn.invars[0].aval) - n), 0.0
    if name == "dot_general":
        (lhs_contract, _), _ = eqn.params["dimension_numbers"]
        k = math.prod(eqn.invars[0].aval.shape[d] for d in lhs_contract)
        return float(2 * n * k), 0.0
    flops = trans = 0.0
    for sub in _sub_jaxprs(eqn.params):
        f, t = jaxpr_ops(sub, fold)
        flops, trans = flops + f, trans + t
    return flops, trans


def _sub_jaxprs(params: dict) -> list[Jaxpr]:
    found = []
    for p in params.values():
        for item in (p if isinstance(p, (tuple, list)) else (p,)):
            if isinstance(item, ClosedJaxpr):
                found.append(item.jaxpr)
            elif isinstance(item, Jaxpr):
                found.append(item)
    return found


def jaxpr_ops(jaxpr: Jaxpr, fold: bool = False, const_in: list[bool] | None = None
              ) -> tuple[float, float]:
    """(flops, transcendentals) of a jaxpr.  With `fold`, equations whose operands are all
    constants cost nothing (a compiler folds them); `const_in` says which inputs are."""
    const = set(jaxpr.constvars)
    if const_in is not None:
        const.update(v for v, c in zip(jaxpr.invars, const_in) if c)
    flops = trans = 0.0
    for eqn in jaxpr.eqns:
        operands_const = [type(a) is Literal or a in const for a in eqn.invars]
        if fold and all(operands_const) and not eqn.primitive.effectful:
            const.update(eqn.outvars)
            continue
        f, t = _eqn_ops(eqn, fold, operands_const)
        flops, trans = flops + f, trans + t
    return flops, trans


def _report(flops: float, trans: float, nbytes: float) -> dict[str, float]:
    """JAX's dict, leaving out zero entries as XLA's report does."""
    out = {"flops": flops, "transcendentals": trans, "bytes accessed": nbytes}
    return {k: float(v) for k, v in out.items() if v}


def lowered_cost(closed: ClosedJaxpr) -> dict[str, float]:
    """Unfused estimate: every equation reads its operands and writes its results."""
    jaxpr = closed.jaxpr
    flops, trans = jaxpr_ops(jaxpr)
    nbytes = sum(_bytes(a.aval) for e in jaxpr.eqns for a in (*e.invars, *e.outvars))
    return _report(flops, trans, nbytes)


def _materialized(jaxpr: Jaxpr) -> list[Any]:
    """Intermediate values that stay in memory after fusion (results of dots and convs that
    are not outputs of the program)."""
    outs = {v for v in jaxpr.outvars if type(v) is not Literal}
    return [v.aval for e in jaxpr.eqns if e.primitive.name in _MATERIALIZED
            for v in e.outvars if v not in outs]


def compiled_cost(closed: ClosedJaxpr) -> dict[str, float]:
    """Fused estimate: the program's inputs and outputs, each reduction's initial value, and
    the materialized intermediates (written once, read once)."""
    jaxpr = closed.jaxpr
    flops, trans = jaxpr_ops(jaxpr, fold=True)
    nbytes = sum(_bytes(v.aval) for v in (*jaxpr.invars, *jaxpr.outvars))
    nbytes += sum(_bytes(e.outvars[0].aval) // max(_size(e.outvars[0].aval), 1)
                  for e in jaxpr.eqns if e.primitive.name in _REDUCTIONS)
    nbytes += 2 * sum(_bytes(a) for a in _materialized(jaxpr))
    return _report(flops, trans, nbytes)


@dataclasses.dataclass(frozen=True)
class CompiledMemoryStats:
    """Estimated buffer sizes of a compiled program (the fields of XLA's CompiledMemoryStats);
    `generated_code_size_in_bytes` is the size of pyjax's generated Python source."""

    generated_code_size_in_bytes: int
    argument_size_in_bytes: int
    output_size_in_bytes: int
    alias_size_in_bytes: int
    temp_size_in_bytes: int
    host_generated_code_size_in_bytes: int = 0
    host_argument_size_in_bytes: int = 0
    host_output_size_in_bytes: int = 0
    host_alias_size_in_bytes: int = 0
    host_temp_size_in_bytes: int = 0


_POINTER_BYTES = 8  # a tuple of several outputs holds one pointer per output


def memory_stats(closed: ClosedJaxpr, source: str) -> CompiledMemoryStats:
    jaxpr = closed.jaxpr
    n_out = len(jaxpr.outvars)
    out_bytes = sum(_bytes(v.aval) for v in jaxpr.outvars)
    if n_out > 1:
        out_bytes += _POINTER_BYTES * n_out
    return CompiledMemoryStats(
        generated_code_size_in_bytes=len(source.encode()),
        argument_size_in_bytes=sum(_bytes(v.aval) for v in jaxpr.invars),
        output_size_in_bytes=out_bytes, alias_size_in_bytes=0,
        temp_size_in_bytes=sum(_bytes(a) for a in _materialized(jaxpr)))
