"""dot_general: contraction with batch dimensions, the primitive behind dot, matmul, einsum."""
from __future__ import annotations

import functools
import math
from typing import Any, Sequence

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
    """Batch axes first, then x's free axes, then y's: one matmul over (batch, m, k) x
    (batch, k, n) after transposing (views) and reshaping."""
    lc, rc, lb, rb = _dims(dimension_numbers)
    if preferred_element_type is not None:
        x = x.astype(preferred_element_type, copy=False)
        y = y.astype(preferred_element_type, copy=False)
    lfree = [i for i in range(x.ndim) if i not in lc and i not in lb]
    rfree = [i for i in range(y.ndim) if i not in rc and i not in rb]
    xt = x.transpose(*lb, *lfree, *lc)
    yt = y.transpose(*rb, *rc, *rfree)
    nb = len(lb)
    bshape = xt.shape[:nb]
    lshape = xt.shape[nb:nb + len(lfree)]
    rshape = yt.shape[nb + len(rc):]
    k = math.prod(xt.shape[nb + len(lfree):])
    if nb:
        out = np.matmul(xt.reshape((*bshape, math.prod(lshape), k)),
                        yt.reshape((*bshape, k, math.prod(rshape))))
    else:
        out = np.dot(xt.reshape((math.prod(lshape), k)), yt.reshape((k, math.prod(rshape))))
    return out.reshape((*bshape, *lshape, *rshape))


def _dot_general_pp(eqn: Any, context: Any) -> Any:
    """JAX prints the dimension numbers as lists: `(([1], [0]), ([], []))`."""
    params = eqn.params
    shown = ["dimension_numbers"] + [
        p for p in ("precision", "preferred_element_type", "out_sharding")
        if params.get(p) is not None]
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    as_lists = ((list(lc), list(rc)), (list(lb), list(rb)))
    return pp_eqn_standard(eqn, context, shown, {**params, "dimension_numbers": as_lists})


dot_general_p = make_primitive("dot_general", _dot_general_impl, _dot_general_abstract)
dot_general_p.pp_rule = _dot_general_pp


def _remaining(n: int, *removed: Sequence[int]) -> list[int]:
    drop = {i for r in removed for i in r}
    return [i for i in range(n) if i not in drop]


def _consecutive(*sizes: int) -> list[list[int]]:
    """Consecutive index ranges of the given lengths: (2, 1) -> [[0, 1], [2]]."""
    out, start = [], 0
    for n in sizes:
        out.append(list(range(start, start + n)))
        start += n
    return out


def _transpose_lhs(ct: Any, x: Any, y: Any, *, dimension_numbers: Any, precision: Any = None,
                   preferred_element_type: Any = None, out_sharding: Any = None,
                   swap_ans: bool = False) -> Any:
    """Cotangent of the lhs `x` (an UndefinedPrimal): contract ct with y over y's free axes,
    then permute the result into x's axis order (JAX's bookkeeping, so jaxprs match)."""
    from pyjax._src.primitives.elementwise import convert_element_type
    from pyjax._src.primitives.shape import transpose
    x_contract, y_contract, x_batch, y_batch = _dims(dimension_numbers)
    x_aval = x.aval
    x_kept = _remaining(x_aval.ndim, x_contract, x_batch)
    y_kept = _remaining(np.ndim(y), y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _consecutive(len(x_batch), len(y_kept), len(x_kept))
    else:
        ans_batch, _, ans_y = _consecutive(len(x_batch), len(x_kept), len(y_kept))
    dims = ((ans_y, y_kept), (ans_batch, list(y_batch)))
    x_contract_by_y = [x_contract[i] for i in np.argsort(y_contract, kind="stable")]
    unsorted = list(x_batch) + x_kept + x_contract_by_y
    out_axes = tuple(int(i) for i in np.argsort(unsorted, kind="stable"))
    out = dot_general(ct, y, dims, precision=precision,
                      preferred_element_type=preferred_element_type)
    x_bar = transpose(out, out_axes)
    if x_bar.dtype != x_aval.dtype:
        x_bar = convert_element_type(x_bar, x_aval.dtype, x_aval.weak_type)
    return x_bar


def _transpose_rhs(ct: Any, x: Any, y: Any, *, dimension_numbers: Any, **params: Any) -> Any:
    x_contract, y_contract, x_batch, y_batch = _dims(dimension_numbers)
    swapped = ((y_contract, x_contract), (y_batch, x_batch))
    return _transpose_lhs(ct, y, x, dimension_numbers=swapped, swap_ans=True, **params)


def _dot_general_transpose(ct: Any, x: Any, y: Any, **params: Any) -> list:
    """Bilinear: exactly one of x, y is the linear (undefined) operand."""
    from pyjax._src.transforms import ad
    if ad.is_undefined(x):
        if type(ct) is ad.Zero:
            return [ad.Zero(ad.tangent_aval(x.aval)), None]
        return [_transpose_lhs(ct, x, y, **params), None]
    if type(ct) is ad.Zero:
        return [None, ad.Zero(ad.tangent_aval(y.aval))]
    return [None, _transpose_rhs(ct, x, y, **params)]


def _bump(axes: Sequence[int], b: int) -> tuple:
    """Per-example axes renumbered for an operand with a batch axis inserted at `b`."""
    return tuple(a + 1 if a >= b else a for a in axes)


def _free_before(axis: int, contract: Sequence[int], batch: Sequence[int]) -> int:
    """How many free (neither contracted nor batch) per-example axes come before `axis`."""
    return sum(1 for a in range(axis) if a not in contract and a not in batch)


@functools.lru_cache(maxsize=1024)  # eager vmap asks the same question on every call
def _batch_dimension_numbers(lhs_ndim: int, dims: tuple[int | None, int | None],
                             dimension_numbers: Any) -> tuple[Any, int]:
    """JAX's bookkeeping: two vmapped axes become a new leading batch dimension of the
    dot_general; one becomes a free dimension of its operand.  Returns the new dimension
    numbers and the vmapped axis of the result (`lhs_ndim`: the unbatched lhs's rank)."""
    lbd, rbd = dims
    (lc, rc), (lb, rb) = dimension_numbers
    if lbd is not None and rbd is not None:
        lb, rb = (lbd, *_bump(lb, lbd)), (rbd, *_bump(rb, rbd))
        lc, rc = _bump(lc, lbd), _bump(rc, rbd)
        out_dim = 0
    elif lbd is not None:
        out_dim = len(lb) + _free_before(lbd, lc, lb)
        lb, lc = _bump(lb, lbd), _bump(lc, lbd)
    else:
        out_dim = lhs_ndim - len(lc) + _free_before(rbd, rc, rb)
        rb, rc = _bump(rb, rbd), _bump(rc, rbd)
    return ((lc, rc), (lb, rb)), out_dim


def _dot_general_batch(vals: Sequence[Any], dims: Sequence[Any], *, dimension_numbers: Any,
                       precision: Any = None, preferred_element_type: Any = None,
                       out_sharding: Any = None) -> tuple:
    """One dot_general over the batched operands; the result's vmapped axis stays where the
    new dimension numbers put it."""
    x, y = vals
    lhs_ndim = np.ndim(x) if dims[0] is None else 0  # only read when the lhs is unbatched
    new_dims, out_dim = _batch_dimension_numbers(lhs_ndim, tuple(dims), dimension_numbers)
    out = dot_general_p.bind(x, y, dimension_numbers=new_dims, precision=precision,
                             preferred_element_type=preferred_element_type, out_sharding=None)
    return out, out_dim


def _register_ad_rules() -> None:
    from pyjax._src.transforms import ad
    ad.defjvp(dot_general_p, lambda g, x, y, **params: dot_general_p.bind(g, y, **params),
              lambda g, x, y, **params: dot_general_p.bind(x, g, **params))
    dot_general_p.transpose = _dot_general_transpose
    dot_general_p.batch = _dot_general_batch


_register_ad_rules()


def _ints(axes: Sequence[Any]) -> tuple[int, ...]:
    return tuple(int(i) for i in axes)


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """General tensor contraction: ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))."""
    (lc, rc), (lb, rb) = dimension_numbers
    dims = ((_ints(lc), _ints(rc)), (_ints(lb), _ints(rb)))  # tuples: params are hashable
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


