"""dot_general: contraction with batch dimensions, the primitive behind dot, matmul, einsum."""
from __future__ import annotations

import functools
import math
from typing import Any, Sequence

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import pp_eqn_standard
from pyjax._src.parallel import propagation
from pyjax._src.primitives import _blas_threads
from pyjax._src.primitives._accumulation import accumulation_dtype
from pyjax._src.primitives._rules import NUMBER, check_kinds, make_primitive
from pyjax._src.primitives.enums import (
    DotAlgorithm, DotAlgorithmPreset, canonicalize_precision)


def _dims(dimension_numbers: Any) -> tuple:
    (lc, rc), (lb, rb) = dimension_numbers
    return tuple(lc), tuple(rc), tuple(lb), tuple(rb)


@functools.lru_cache(maxsize=None)
def _type_properties(dt: np.dtype) -> tuple:
    """XLA's order of element types for mixed-type dots (the higher one is the result):
    complex first, then exponent range, mantissa, width, signedness."""
    real = dtypes.finfo(dt).dtype if dtypes.is_complex(dt) else dt
    is_float = dtypes.is_float(real)
    bits = 1 if real == dtypes.bool_ else real.itemsize * 8
    return (dtypes.is_complex(dt), dtypes.finfo(real).maxexp if is_float else -1,
            dtypes.finfo(real).nmant if is_float else -1, bits, not dtypes.is_unsigned(real))


def _bit_width(dt: np.dtype) -> int:
    """Bits as JAX counts them: a complex type has the width of its real part."""
    if dt == dtypes.bool_:
        return 1
    return dt.itemsize * 4 if dtypes.is_complex(dt) else dt.itemsize * 8


def _result_dtype(x: np.dtype, y: np.dtype, precision: Any, preferred: Any) -> np.dtype:
    """JAX's dtype rule: the higher of the operand types (equal-ranked different types are an
    error), then `preferred_element_type` (integers may only widen unless an algorithm is
    given)."""
    px, py = _type_properties(x), _type_properties(y)
    if px == py and x != y:
        raise TypeError(f"lax.dot_general argument type error: {x}, {y}")
    result = x if px >= py else y
    if preferred is None or preferred == result:
        return result
    if (not isinstance(precision, (DotAlgorithm, DotAlgorithmPreset))
            and not dtypes.is_float(result) and _bit_width(preferred) < _bit_width(result)):
        raise TypeError("`preferred_element_type` must not be narrower than the original "
                        f"type, got preferred_element_type of {preferred} for result type of "
                        f"{result}.")
    return preferred


def _check_dims(x: ShapedArray, y: ShapedArray, dimension_numbers: Any) -> None:
    """JAX's shape-rule errors for malformed dimension numbers."""
    lc, rc, lb, rb = _dims(dimension_numbers)
    for side, aval, contract, batch in (("lhs", x, lc, lb), ("rhs", y, rc, rb)):
        if not all(0 <= d < aval.ndim for d in (*contract, *batch)):
            raise TypeError(f"dot_general requires {side} dimension numbers to be nonnegative "
                            f"and less than the number of axes of the {side} value, got "
                            f"{side}_batch of {batch} and {side}_contracting of {contract} "
                            f"for {side} of rank {aval.ndim}")
    if len(lb) != len(rb):
        raise TypeError("dot_general requires equal numbers of lhs_batch and rhs_batch "
                        f"dimensions, got lhs_batch {lb} and rhs_batch {rb}.")
    for side, contract, batch in (("lhs", lc, lb), ("rhs", rc, rb)):
        if len(set(batch)) != len(batch):
            raise TypeError(f"dot_general requires {side} batch dimensions to be distinct, "
                            f"got {side}_batch {batch}.")
        if len(set(contract)) != len(contract):
            raise TypeError(f"dot_general requires {side} contracting dimensions to be "
                            f"distinct, got {side}_contracting {contract}.")
        if set(contract) & set(batch):
            raise TypeError(f"dot_general requires {side} batch dimensions to be disjoint from "
                            f"contracting dimensions, got {side}_batch {batch} and "
                            f"{side}_contracting {contract}.")
    if tuple(x.shape[i] for i in lb) != tuple(y.shape[i] for i in rb):
        raise TypeError("dot_general requires lhs batch dimensions and rhs batch dimensions to "
                        f"have the same shape, got {tuple(x.shape[i] for i in lb)} and "
                        f"{tuple(y.shape[i] for i in rb)}.")
    if tuple(x.shape[i] for i in lc) != tuple(y.shape[i] for i in rc):
        raise TypeError("dot_general requires contracting dimensions to have the same shape, "
                        f"got {tuple(x.shape[i] for i in lc)} and "
                        f"{tuple(y.shape[i] for i in rc)}.")


def _dot_general_abstract(x: ShapedArray, y: ShapedArray, *, dimension_numbers: Any,
                          precision: Any = None, preferred_element_type: Any = None,
                          out_sharding: Any = None) -> ShapedArray:
    lc, rc, lb, rb = _dims(dimension_numbers)
    check_kinds("dot_general", NUMBER + ("bool",), x, y)
    _check_dims(x, y, dimension_numbers)
    dtype = _result_dtype(x.dtype, y.dtype, precision, preferred_element_type)
    batch = [x.shape[i] for i in lb]
    lfree = [s for i, s in enumerate(x.shape) if i not in lc and i not in lb]
    rfree = [s for i, s in enumerate(y.shape) if i not in rc and i not in rb]
    return ShapedArray((*batch, *lfree, *rfree), dtype, x.weak_type and y.weak_type)


#: the presets XLA's CPU backend accepts (others fail at lowering, as in JAX)
_CPU_PRESETS = frozenset({"DEFAULT", "F16_F16_F16", "F32_F32_F32", "F64_F64_F64",
                          "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6"})
#: presets with a CPU emitter: operands converted to the type given, computed in it
_CPU_EMITTED = {"F32_F32_F32": np.dtype(np.float32), "F64_F64_F64": np.dtype(np.float64)}


def _algorithm_compute_dtype(precision: Any) -> np.dtype | None:
    """The dtype the CPU computes an algorithm-specified dot in (None: the operands' own),
    raising JAX's errors for algorithms the CPU does not run."""
    if not isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return None
    from pyjax._src.errors import JaxRuntimeError
    if isinstance(precision, DotAlgorithm) or precision.name not in _CPU_PRESETS:
        raise ValueError(f"The precision '{precision}' is not supported by dot_general on CPU")
    if precision.name == "DEFAULT":
        return None
    if precision.name not in _CPU_EMITTED:
        raise JaxRuntimeError("INVALID_ARGUMENT: Algorithm not supported by the "
                              f"ElementalIrEmitter: ALG_DOT_{precision.name}")
    return _CPU_EMITTED[precision.name]


#: np.dot's C function, without the __array_function__ dispatch (impls get ndarrays)
_np_dot = getattr(np.dot, "_implementation", np.dot)


#: outputs this small (vector dots, matrix-vector products) with long contractions are
#: computed wide; big matrix products keep BLAS's own blocked float32 accumulation
_SMALL = 4096


class _DotPlan:
    """How dot_general computes for one pair of operand types: batch axes first, then x's
    free axes, then y's, as one matmul over (batch, m, k) x (batch, k, n) after transposing
    (views) and reshaping.  Operands are converted to the result type first (the preferred
    type accumulates: int8 x int8 -> int32 does not wrap); long contractions into small
    outputs are computed wide.  BLAS products run on one BLAS thread, large ones in pieces
    shared among threads (_blas_threads)."""

    __slots__ = ("compute", "wide", "out_dtype", "xperm", "yperm", "xmat", "ymat", "out_shape",
                 "flops", "blas", "pieces", "direct", "concurrent", "whole")

    def __init__(self, xshape: tuple, xdtype: np.dtype, yshape: tuple, ydtype: np.dtype,
                 dimension_numbers: Any, precision: Any, preferred_element_type: Any):
        lc, rc, lb, rb = _dims(dimension_numbers)
        self.out_dtype = _result_dtype(xdtype, ydtype, precision, preferred_element_type)
        compute = _algorithm_compute_dtype(precision) or self.out_dtype
        self.compute = compute
        lfree = [i for i in range(len(xshape)) if i not in lc and i not in lb]
        rfree = [i for i in range(len(yshape)) if i not in rc and i not in rb]
        self.xperm, self.yperm = (*lb, *lfree, *lc), (*rb, *rc, *rfree)
        bshape = tuple(xshape[i] for i in lb)
        lshape = tuple(xshape[i] for i in lfree)
        rshape = tuple(yshape[i] for i in rfree)
        k = math.prod(xshape[i] for i in lc)
        m, n = math.prod(lshape), math.prod(rshape)
        self.xmat, self.ymat = (*bshape, m, k), (*bshape, k, n)
        self.out_shape = (*bshape, *lshape, *rshape)
        size = math.prod(bshape) * m * n
        wide = accumulation_dtype(compute, k)
        # long vector dots: BLAS drifts in float32, so small outputs are computed wide
        self.wide = wide if wide is not None and size <= _SMALL else None
        self.flops = 2 * size * k
        self.blas = (np.dtype(self.wide or compute).char in _BLAS_TYPES
                     and self.flops >= _blas_threads.FLOOR_FLOPS)
        self.pieces = _blas_threads.pieces(self.flops) if self.blas else 0
        # whole on one BLAS thread, and worth a helper thread of its own (_blas_threads.defer)
        self.concurrent = (self.blas and not self.pieces
                           and self.flops >= _blas_threads.DEFER_FLOPS)
        # operands already in the product's order and type, no batch: one np.dot
        same = xdtype == ydtype == compute == self.out_dtype and self.wide is None
        self.direct = (same and not self.blas and not lb
                       and self.xperm == tuple(range(len(xshape)))
                       and self.yperm == tuple(range(len(yshape))))
        # a matrix product of matrices (each as it is or transposed, a view) in the result's
        # type, whole on one BLAS thread: np.dot of the two views (what the general path
        # computes, without its conversions and reshapes: a grad step makes hundreds)
        self.whole = (same and self.blas and not self.pieces and len(xshape) == len(yshape) == 2
                      and len(lc) == 1 and not lb)

    def __call__(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if self.whole:
            if self.xperm[0]:
                x = x.T
            if self.yperm[0]:
                y = y.T
            restore = _blas_threads.enter(0)  # one BLAS thread
            try:
                return _np_dot(x, y)
            finally:
                _blas_threads.leave(restore)
        if self.direct:
            return _np_dot(x.reshape(self.xmat), y.reshape(self.ymat)).reshape(self.out_shape)
        xt = x.astype(self.compute, copy=False).transpose(self.xperm)
        yt = y.astype(self.compute, copy=False).transpose(self.yperm)
        if self.wide is not None:
            xt, yt = xt.astype(self.wide), yt.astype(self.wide)
        xm, ym = xt.reshape(self.xmat), yt.reshape(self.ymat)
        if not self.blas:  # NumPy's own loops (integers, bool, half floats) or a tiny product
            out = np.matmul(xm, ym) if len(self.xmat) > 2 else _np_dot(xm, ym)
        elif self.pieces:
            out = _in_pieces(xm, ym, self.pieces)
        else:
            restore = _blas_threads.enter(0)  # one BLAS thread
            try:
                out = np.matmul(xm, ym) if len(self.xmat) > 2 else _np_dot(xm, ym)
            finally:
                _blas_threads.leave(restore)
        return out.reshape(self.out_shape).astype(self.out_dtype, copy=False)


def _in_pieces(x: np.ndarray, y: np.ndarray, pieces: int) -> np.ndarray:
    """The product of x (..., m, k) and y (..., k, n) as `pieces` products on one BLAS thread
    each, shared among threads (_blas_threads.shared): runs of the batch's matrices, else
    blocks of the result's rows (or columns, when it has more of them), each written in place
    (the BLAS reads the operands' blocks and writes the result's through their strides)."""
    *batch, m, k = x.shape
    n = y.shape[-1]
    out = np.empty((*batch, m, n), np.result_type(x, y))
    count = math.prod(batch)
    if count > 1:  # runs of whole matrices
        xs, ys, outs = x.reshape(-1, m, k), y.reshape(-1, k, n), out.reshape(-1, m, n)
        blocks = _blocks(count, pieces)

        def run(i: int) -> None:
            np.matmul(xs[blocks[i]], ys[blocks[i]], out=outs[blocks[i]])
    else:  # every block re-packs the whole other operand: blocks of _MIN_BLOCK and more
        x2, y2, out2 = x.reshape(m, k), y.reshape(k, n), out.reshape(m, n)
        blocks = _blocks(max(m, n), min(pieces, max(1, max(m, n) // _MIN_BLOCK)))
        if m >= n:
            def run(i: int) -> None:
                np.matmul(x2[blocks[i]], y2, out=out2[blocks[i]])
        else:
            def run(i: int) -> None:
                np.matmul(x2, y2[:, blocks[i]], out=out2[:, blocks[i]])
    _blas_threads.shared(len(blocks), run)
    return out


#: the least rows (columns) of a block of a matrix product: the BLAS packs the other operand
#: again for each block ((128,784)x(784,512) on one thread, CPU: 2.79 ms whole, 2.85 in 2
#: column blocks, 2.96 in 8 of 64), but blocks of 256 left attention's weight gradients,
#: (256,2048)x(2048,256), whole on one thread (its grad, 8 heads of 256, on 2 idle cores:
#: 74-77 ms with blocks of 256, 61-64 with blocks of 64, 61-69 on OpenBLAS's 2 threads)
_MIN_BLOCK = 64


def _blocks(size: int, pieces: int) -> list[slice]:
    """range(size) cut into at most `pieces` blocks of equal length (the last shorter)."""
    step = -(-size // min(pieces, size))
    return [slice(a, a + step) for a in range(0, size, step)]


def _dot_general_impl(x: np.ndarray, y: np.ndarray, *, dimension_numbers: Any,
                      precision: Any = None, preferred_element_type: Any = None,
                      out_sharding: Any = None) -> np.ndarray:
    return _DotPlan(x.shape, x.dtype, y.shape, y.dtype, dimension_numbers, precision,
                    preferred_element_type)(x, y)


def _dot_general_specialize(x: ShapedArray, y: ShapedArray, *, dimension_numbers: Any,
                            precision: Any = None, preferred_element_type: Any = None,
                            out_sharding: Any = None) -> Any:
    """The impl for operands of these types, its plan worked out once (eager plans): NumPy's
    dot itself when the plan is one np.dot of the operands as they are ((m, k) x (k, n))."""
    plan = _DotPlan(x.shape, x.dtype, y.shape, y.dtype, dimension_numbers, precision,
                    preferred_element_type)
    if (plan.direct and plan.xmat == x.shape and plan.ymat == y.shape
            and plan.out_shape == (x.shape[0], y.shape[1])):
        return _np_dot
    return plan


#: NumPy type codes whose products call the BLAS (float32/64, complex64/128)
_BLAS_TYPES = frozenset("fdFD")


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
dot_general_p.specialize = _dot_general_specialize
def _dot_general_sharding(eqn: Any, ins: list, sizes: dict) -> list:
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs_rank, rhs_rank = (len(v.aval.shape) for v in eqn.invars)
    lhs = ins[0] or (None,) * lhs_rank
    rhs = ins[1] or (None,) * rhs_rank
    batch = [lhs[a] if lhs[a] is not None else rhs[b] for a, b in zip(lb, rb)]
    lhs_free = [lhs[i] for i in range(lhs_rank) if i not in lc and i not in lb]
    rhs_free = [rhs[i] for i in range(rhs_rank) if i not in rc and i not in rb]
    out, used = [], set()
    for entry in batch + lhs_free + rhs_free:  # a mesh axis splits one result axis at most
        if entry is not None and propagation.names(entry) & used:
            entry = None
        used |= propagation.names(entry)
        out.append(entry)
    return [tuple(out)]


dot_general_p.sharding_rule = _dot_general_sharding


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
                preferred_element_type: Any = None, *, out_sharding: Any = None) -> Any:
    """General tensor contraction: ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))."""
    return dot(lhs, rhs, dimension_numbers=dimension_numbers, precision=precision,
               preferred_element_type=preferred_element_type, out_sharding=out_sharding)


def dot(lhs: Any, rhs: Any, *, dimension_numbers: Any = None, precision: Any = None,
        preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """lax.dot: a contraction given by `dimension_numbers`, by default the plain
    matrix/vector product (lhs's last axis with rhs's first, for 1-D or 2-D operands)."""
    lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
    if dimension_numbers is None:
        if (1 <= len(lhs_shape) <= 2 and 1 <= len(rhs_shape) <= 2
                and lhs_shape[-1] == rhs_shape[0]):
            dimension_numbers = (((len(lhs_shape) - 1,), (0,)), ((), ()))
        else:
            raise ValueError(
                "jax.lax.dot: dimension_numbers must be specified when not performing simple "
                "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
                f"lhs_shape={lhs_shape} rhs_shape={rhs_shape}")
    (lc, rc), (lb, rb) = dimension_numbers
    dims = ((_ints(lc), _ints(rc)), (_ints(lb), _ints(rb)))  # tuples: params are hashable
    pref = None if preferred_element_type is None else dtypes.check_user_dtype(
        preferred_element_type)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dims,
                              precision=canonicalize_precision(precision),
                              preferred_element_type=pref, out_sharding=None)


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Matrix products over all leading (batch) axes."""
    lnd, rnd = np.ndim(lhs), np.ndim(rhs)
    if min(lnd, rnd) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {lnd}, {rnd}")
    if lnd != rnd:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {lnd}, {rnd}")
    batch = tuple(range(lnd - 2))
    return dot_general(lhs, rhs, (((lnd - 1,), (rnd - 2,)), (batch, batch)),
                       precision=precision)
