"""dot_general: contraction with batch dimensions, the primitive behind dot, matmul, einsum."""
from __future__ import annotations

from typing import Any

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import pp_eqn_standard
from pyjax._src.primitives._rules import NUMBER, check_kinds, make_primitive


def _dims(dimension_numbers: Any) -> tuple:
    (lc, rc), (lb, rb) = dimension_numbers
    return tuple(lc), tuple(rc), tuple(lb), tuple(rb)


def _dot_general_abstract(x: ShapedArray, y: ShapedArray, *, dimension_numbers: Any,
                          precision: Any = None, preferred_element_type: Any = None,
                          out_sharding: Any = None) -> ShapedArray:
    lc, rc, lb, rb = _dims(dimension_numbers)
    check_kinds("dot_general", NUMBER + ("bool",), x, y)
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError("dot_general requires equal numbers of lhs and rhs contracting and batch "
                        f"dimensions, got {dimension_numbers}.")
    for a, b in list(zip(lc, rc)) + list(zip(lb, rb)):
        if not (0 <= a < x.ndim and 0 <= b < y.ndim):
            raise TypeError(f"dot_general dimension numbers out of range: {dimension_numbers} "
                            f"for shapes {x.shape} and {y.shape}")
        if x.shape[a] != y.shape[b]:
            raise TypeError(
                "dot_general requires contracting dimensions to have the same shape, got "
                f"{tuple(x.shape[i] for i in lc)} and {tuple(y.shape[i] for i in rc)}.")
    if x.dtype != y.dtype and preferred_element_type is None:
        raise TypeError("dot_general requires operands of the same dtype, got "
                        f"{x.dtype} and {y.dtype}.")
    batch = [x.shape[i] for i in lb]
    lfree = [s for i, s in enumerate(x.shape) if i not in lc and i not in lb]
    rfree = [s for i, s in enumerate(y.shape) if i not in rc and i not in rb]
    dtype = preferred_element_type or x.dtype
    return ShapedArray((*batch, *lfree, *rfree), dtype, x.weak_type and y.weak_type)


def _dot_general_impl(x: np.ndarray, y: np.ndarray, *, dimension_numbers: Any,
                      precision: Any = None, preferred_element_type: Any = None,
                      out_sharding: Any = None) -> np.ndarray:
    lc, rc, lb, rb = _dims(dimension_numbers)
    if preferred_element_type is not None:
        x = x.astype(preferred_element_type, copy=False)
        y = y.astype(preferred_element_type, copy=False)
    if not lb:
        return np.tensordot(x, y, axes=(lc, rc))
    lfree = [i for i in range(x.ndim) if i not in lc and i not in lb]
    rfree = [i for i in range(y.ndim) if i not in rc and i not in rb]
    xt = np.transpose(x, (*lb, *lfree, *lc))
    yt = np.transpose(y, (*rb, *rc, *rfree))
    bshape = xt.shape[:len(lb)]
    m = int(np.prod(xt.shape[len(lb):len(lb) + len(lfree)], dtype=np.int64))
    k = int(np.prod([x.shape[i] for i in lc], dtype=np.int64))
    n = int(np.prod(yt.shape[len(rb) + len(rc):], dtype=np.int64))
    out = np.matmul(xt.reshape(*bshape, m, k), yt.reshape(*bshape, k, n))
    return out.reshape(*bshape, *[x.shape[i] for i in lfree], *[y.shape[i] for i in rfree])


def _dot_general_pp(eqn: Any, context: Any) -> Any:
    params = eqn.params
    shown = ["dimension_numbers"] + [
        p for p in ("precision", "preferred_element_type", "out_sharding")
        if params.get(p) is not None]
    return pp_eqn_standard(eqn, context, shown)


dot_general_p = make_primitive("dot_general", _dot_general_impl, _dot_general_abstract)
dot_general_p.pp_rule = _dot_general_pp


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """General tensor contraction: ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))."""
    (lc, rc), (lb, rb) = dimension_numbers
    dims = (([int(i) for i in lc], [int(i) for i in rc]), ([int(i) for i in lb],
                                                           [int(i) for i in rb]))
    pref = None if preferred_element_type is None else dtypes.check_user_dtype(
        preferred_element_type)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dims, precision=precision,
                              preferred_element_type=pref, out_sharding=None)


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Vector/matrix products contracting lhs's last axis with rhs's first (lax.dot)."""
    lnd, rnd = np.ndim(lhs), np.ndim(rhs)
    if lnd not in (1, 2) or rnd not in (1, 2):
        raise TypeError(f"lax.dot requires 1-D or 2-D operands, got shapes {np.shape(lhs)} and "
                        f"{np.shape(rhs)}")
    return dot_general(lhs, rhs, (((lnd - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


