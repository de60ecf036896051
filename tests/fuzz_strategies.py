"""Shared pieces of the fuzz suite (tests/test_fuzz_*.py): the functions fuzzed, hypothesis
strategies for operands (every x32 dtype, empty and 0-d shapes, NaN/±inf/-0., huge and tiny
values, Python scalars), the NumPy reference evaluation, dtype-aware comparison, and
KNOWN_DIFFERENCES: the named table of every place JAX 0.10.2 (hence pyjax) deliberately
differs from NumPy.  Each difference carries examples whose JAX results are recorded by
tests/oracle/record_fuzz.py and checked in tests/test_fuzz_differences.py, as are REGRESSIONS
(the pyjax bugs this fuzzing found).  Every test is derandomized and database-free, so CI
runs are reproducible.

Subnormal floats are left out of float32/bfloat16 operands: XLA's CPU flushes them to zero
(inputs and results), as pyjax does (backend/fp_mode.py), and NumPy does not.  Complex operands are finite
with parts 0 or of magnitude in [2**-10, 1e3]: XLA's formulas for complex NaN/inf parts follow
neither C99 nor NumPy, and lose relative accuracy for tiny parts.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
from typing import Any, Callable, Sequence

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

HERE = os.path.dirname(os.path.abspath(__file__))

UNARY = ["abs", "absolute", "acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan",
         "arctanh", "asin", "asinh", "atan", "atanh", "bitwise_count", "bitwise_invert",
         "bitwise_not", "cbrt", "ceil", "conj", "conjugate", "cos", "cosh", "deg2rad", "degrees",
         "exp", "exp2", "expm1", "fabs", "floor", "frexp", "invert", "isfinite", "isinf", "isnan",
         "log", "log10", "log1p", "log2", "logical_not", "modf", "negative", "positive",
         "rad2deg", "radians", "reciprocal", "rint", "sign", "signbit", "sin", "sinh", "spacing",
         "sqrt", "square", "tan", "tanh", "trunc"]
BINARY = ["add", "arctan2", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or",
          "bitwise_right_shift", "bitwise_xor", "copysign", "divide", "divmod", "equal",
          "float_power", "floor_divide", "fmax", "fmin", "fmod", "gcd", "greater",
          "greater_equal", "heaviside", "hypot", "lcm", "ldexp", "left_shift", "less",
          "less_equal", "logaddexp", "logaddexp2", "logical_and", "logical_or", "logical_xor",
          "maximum", "minimum", "mod", "multiply", "nextafter", "not_equal", "pow", "power",
          "remainder", "right_shift", "subtract", "true_divide"]
# jnp.ufunc objects (JAX makes only these binary functions ufuncs).
UFUNC_OBJECTS = ["add", "bitwise_and", "bitwise_or", "bitwise_xor", "logaddexp", "logaddexp2",
                 "logical_and", "logical_or", "logical_xor", "maximum", "minimum", "multiply",
                 "subtract"]

REDUCTIONS = ["sum", "prod", "mean", "var", "std", "min", "max", "argmin", "argmax", "any",
              "all", "cumsum", "cumprod", "nansum", "nanprod", "nanmean", "nanvar", "nanstd",
              "nanmin", "nanmax", "nanargmin", "nanargmax", "nancumsum", "nancumprod"]
# Reductions taking dtype=, and the dtypes asked for.
DTYPE_REDUCTIONS = ["sum", "prod", "mean", "var", "std", "cumsum", "cumprod", "nansum",
                    "nanmean"]
REQUESTED = ["bool", "int8", "int32", "uint16", "bfloat16", "float32", "complex64"]

X32 = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "bfloat16",
       "float32", "complex64"]
WEAK = {"weak_int": 3, "weak_float": 2.5, "weak_complex": 1.5 - 2j}
WEAK_DTYPE = {"weak_int": "int32", "weak_float": "float32", "weak_complex": "complex64"}
KINDS = X32 + list(WEAK)


def np_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def kind_tuples(arity: int) -> list[tuple[str, ...]]:
    """Every tuple of input kinds a function of `arity` operands is recorded for."""
    if arity == 1:
        return [(k,) for k in KINDS]
    return [(a, b) for a in KINDS for b in KINDS]


def kind_example(kind: str, shape: tuple[int, ...] = (2,)) -> Any:
    return WEAK[kind] if kind in WEAK else np.zeros(shape, np_dtype(kind))


def scalar_patterns(kinds: Sequence[str]) -> list[tuple[tuple[int, ...], ...]]:
    """Operand shapes with at least one 0-d array (Python scalars keep their place)."""
    options = [[()] if k in WEAK else [(2,), ()] for k in kinds]
    patterns = [()]
    for opts in options:
        patterns = [p + (o,) for p in patterns for o in opts]
    return [p for p in patterns if any(o == () and k not in WEAK for o, k in zip(p, kinds))]


def dtype_key(name: str, kinds: Sequence[str], pattern: Sequence[tuple] | None = None) -> str:
    """The record key: 'add(int8,weak_float)', with '|1,0' (operand ranks) for 0-d operands."""
    key = f"{name}({','.join(kinds)})"
    if pattern is not None:
        key += "|" + ",".join(str(len(s)) for s in pattern)
    return key


def reduction_key(name: str, kind: str, requested: str | None = None) -> str:
    return f"{name}({kind})" if requested is None else f"{name}({kind},dtype={requested})"


def describe(dtype: Any, weak: bool) -> str:
    """'float32' for a strong result, 'float32*' for a weakly typed one."""
    return np_dtype(str(np.dtype(dtype))).name + ("*" if weak else "")


# ---------------------------------------------------------------------------------------------
# Known differences between JAX (and so pyjax) and NumPy
# ---------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class KnownDifference:
    """A documented JAX behaviour that differs from NumPy.  `examples` are (jax expression,
    NumPy expression) pairs: the first is recorded from JAX and must be reproduced by pyjax,
    the second must give a different answer (or raise), which proves the difference real."""
    doc: str
    examples: tuple[tuple[str, str], ...]


KNOWN_DIFFERENCES: dict[str, KnownDifference] = {
    "int_floor_divide_by_zero": KnownDifference(
        "Integer x // 0 is XLA's division by zero (-1 for signed, all ones for unsigned) "
        "with floor's correction: -1 where x == 0, -2 elsewhere; NumPy gives 0 and warns.",
        (("jnp.floor_divide(np.int32([5, -5, 0]), np.int32(0))",
          "np.floor_divide(np.int32([5, -5, 0]), np.int32(0))"),
         ("jnp.floor_divide(np.uint8([5, 0]), np.uint8(0))",
          "np.floor_divide(np.uint8([5, 0]), np.uint8(0))"),
         ("jnp.divmod(np.int8([7, 0]), np.int8([0, 0]))[0]",
          "np.divmod(np.int8([7, 0]), np.int8([0, 0]))[0]"))),
    "int_power_exponent_bits": KnownDifference(
        "Integer x ** y with an array exponent is binary exponentiation over the low 6 bits "
        "of y (two's complement): y >= 64 acts as y % 64 and a negative y as y % 64 too "
        "(2 ** -2 is 2 ** 62, wrapping to 0; (-1) ** -3 is -1).  A concrete scalar negative "
        "exponent raises TypeError (lax.integer_pow).  NumPy computes the full wrapped power "
        "and raises ValueError for negative exponents.",
        (("jnp.power(np.int32([2147483646, 3, -79, 2, -1]), np.int32([156, 100, -1, -2, -3]))",
          "np.power(np.int32([2147483646, 3, -79, 2, -1]), np.int32([156, 100, 1, 2, 3]))"),
         ("jnp.power(np.int32([2]), np.int32(-1))", "np.power(np.int32([2]), np.int32(-1))"))),
    "integer_pow_reciprocal_overflow": KnownDifference(
        "x ** -n for a concrete integer n is 1 / x ** n with x ** n by binary exponentiation "
        "in x's dtype, so when x ** n overflows a complex result is NaN (float: 0); NumPy "
        "gives the tiny (or zero) true value.",
        (("jnp.power(np.complex64([-1 - 1j]), -1068)",
          "np.power(np.complex64([-1 - 1j]), -1068)"),)),
    "float_to_int_cast_saturates": KnownDifference(
        "Float to integer conversion (astype, and reductions with an integer dtype=) truncates "
        "toward zero and saturates: NaN gives 0, ±inf and out-of-range values the type's "
        "bounds, negative values give 0 for unsigned types.  NumPy's result is undefined.",
        (("jnp.array([np.nan, np.inf, -np.inf, 1e10, -1e10, -1.5, 2.7]).astype(np.int8)",
          "np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, -1.5, 2.7]).astype(np.int8)"),
         ("jnp.array([np.nan, np.inf, -np.inf, 1e10, -1.5]).astype(np.uint32)",
          "np.array([np.nan, np.inf, -np.inf, 1e10, -1.5]).astype(np.uint32)"),
         ("jnp.sum(np.array([np.inf, 1.0]), dtype=np.int16)",
          "np.sum(np.array([np.inf, 1.0]), dtype=np.int16)"))),
    "out_of_bounds_index_clamps": KnownDifference(
        "Integer indices (static or array) past either end are clamped by x[i] and "
        ".at[i].get() (mode 'clip' is the default for retrieval); NumPy raises IndexError.",
        (("jnp.arange(5)[np.array([7, -9, -1])]", "np.arange(5)[np.array([7, -9, -1])]"),
         ("jnp.arange(6).reshape(2, 3)[5, -7]", "np.arange(6).reshape(2, 3)[5, -7]"))),
    "out_of_bounds_take_fills": KnownDifference(
        "jnp.take and take_along_axis default to mode='fill' (as .at[].get(mode='fill' or "
        "'drop') fills): "
        "out-of-bounds indices give NaN for inexact types, the minimum for signed, the maximum "
        "for unsigned integers and True for bool; NumPy raises IndexError.",
        (("jnp.take(np.arange(5.0), np.array([7, -9, -1]))",
          "np.take(np.arange(5.0), np.array([7, -9, -1]))"),
         ("jnp.take(np.arange(5, dtype=np.uint8), np.array([7]))",
          "np.take(np.arange(5, dtype=np.uint8), np.array([7]))"),
         ("jnp.take_along_axis(np.arange(5), np.array([7, -9, -1]), axis=0)",
          "np.take_along_axis(np.arange(5), np.array([7, -9, -1]), axis=0)"),
         ("jnp.asarray(np.arange(3)).at[np.array([3, -4])].get(mode='fill')",
          "np.arange(3)[np.array([3, -4])]"))),
    "out_of_bounds_scatter_drops": KnownDifference(
        ".at[i].set/add/mul/min/max drop updates at out-of-bounds indices (modes None, "
        "'drop', 'fill'); mode='clip' clamps them.  NumPy raises IndexError.",
        (("jnp.asarray(np.arange(5)).at[np.array([7, -9, -1])].set(9)",
          "np.put(np.arange(5), np.array([7, -9, -1]), 9, mode='raise')"),
         ("jnp.asarray(np.arange(5.0)).at[7].add(1.0, mode='clip')",
          "np.add.at(np.arange(5.0), 7, 1.0)"))),
    "var_ddof_at_least_count": KnownDifference(
        "var/std with ddof >= the number of elements give NaN; NumPy gives inf (or NaN for "
        "ddof == n) with a warning.",
        (("jnp.var(np.array([1.0, 2.0]), ddof=3)", "np.var(np.array([1.0, 2.0]), ddof=3)"),)),
    "var_with_integer_dtype": KnownDifference(
        "var/std with an integer dtype= compute the mean, the centred squares and the "
        "final division in that integer type (truncating divisions, wrapping arithmetic) and "
        "return a weakly typed float32; NumPy keeps float intermediates.  (The fuzz tests "
        "check these through the recorded examples only.)",
        (("jnp.var(np.array([1, 2, 3], np.int8), dtype=np.uint16)",
          "np.var(np.array([1, 2, 3], np.int8), dtype=np.uint16)"),
         ("jnp.std(np.array([1.5, 2.0, 7.0]), dtype=np.int32)",
          "np.std(np.array([1.5, 2.0, 7.0]), dtype=np.int32)"))),
    "nanarg_all_nan": KnownDifference(
        "nanargmin/nanargmax of an all-NaN slice give -1; NumPy raises ValueError.",
        (("jnp.nanargmax(np.array([[np.nan, 1.0], [np.nan, np.nan]]), axis=1)",
          "np.nanargmax(np.array([[np.nan, 1.0], [np.nan, np.nan]]), axis=1)"),)),
    "x64_off_canonical_dtypes": KnownDifference(
        "With jax_enable_x64 off every 64-bit result type is canonicalised to 32 bits, and "
        "the computation happens there: int32 and uint32 promote to int64 -> int32 (so large "
        "uint32 values wrap), integer sums wrap at 32 bits, true division and mean of integers "
        "are float32.  NumPy computes in 64 bits.",
        (("jnp.add(np.int32([1]), np.uint32([4000000000]))",
          "np.add(np.int32([1]), np.uint32([4000000000]))"),
         ("jnp.sum(np.array([2**30, 2**30, 2**30], np.int32))",
          "np.sum(np.array([2**30, 2**30, 2**30], np.int32))"),
         ("jnp.true_divide(np.int32([1]), np.int32([3]))",
          "np.true_divide(np.int32([1]), np.int32([3]))"),
         ("jnp.less(np.uint32([3000000000]), np.int32([0]))",
          "np.less(np.uint32([3000000000]), np.int32([0]))"))),
    "python_scalars_are_weak": KnownDifference(
        "Python scalars are weakly typed: they take the array's type, so bfloat16/float16 "
        "arrays stay low precision and int8 arrays stay int8 (NumPy 2 agrees for same-kind "
        "scalars, but promotes a Python float with an integer array to float64).",
        (("jnp.add(np.int8([1]), 2.5)", "np.add(np.int8([1]), 2.5)"),)),
    "bool_mask_needs_concrete_values": KnownDifference(
        "Boolean-mask indexing and other value-dependent shapes raise "
        "NonConcreteBooleanIndexError (an IndexError) under jit; NumPy has no tracing.",
        (("jax.jit(lambda x: x[x > 1])(np.arange(3.0))", "(lambda x: x[x > 5])(np.arange(3.0))"),)),
    "modf_of_infinity": KnownDifference(
        "modf(±inf) has a NaN fractional part (x - trunc(x)); NumPy gives ±0.",
        (("jnp.modf(np.float32([-np.inf, np.inf, 2.5]))[0]",
          "np.modf(np.float32([-np.inf, np.inf, 2.5]))[0]"),)),
    "spacing_by_nextafter": KnownDifference(
        "spacing(x) is nextafter(x, copysign(inf, x)) - x in x's dtype (float16: toward "
        "+inf for every x), so float16 negatives have positive spacing and infinities give "
        "inf or NaN; NumPy's float16 spacing of negatives is negative and of ±inf NaN.",
        (("jnp.spacing(np.float16([-np.inf, -65504.0, 0.0]))",
          "np.spacing(np.float16([-np.inf, -65504.0, 0.0]))"),)),
    "squeeze_0d_with_axis": KnownDifference(
        "squeeze of a 0-d array with axis 0 or -1 raises ValueError (out of bounds); NumPy "
        "returns the array.",
        (("jnp.squeeze(np.array(1.0), 0)", "np.squeeze(np.array(1.0), 0)"),)),
    "subnormals_flushed": KnownDifference(
        "XLA's CPU flushes float32/bfloat16/float64 subnormal inputs and results to zero, "
        "and so does pyjax (backend/fp_mode.py); NumPy keeps them, so the fuzz strategies, "
        "which compare with NumPy, keep subnormals out.",
        (("jnp.multiply(np.float32(1e-20), np.float32(1e-20))",
          "np.multiply(np.float32(1e-20), np.float32(1e-20))"),)),
}
UNREPRODUCED: set[str] = set()

# pyjax bugs the fuzzing found (fixed): expressions whose JAX answers are recorded.
REGRESSIONS = [
    # scatter into a 0-d operand (x.at[()].add(v)) crashed
    "jnp.asarray(np.array(2.0, np.float16)).at[()].add(np.array(1.0, np.float16))",
    "jnp.asarray(np.array(2, np.uint32)).at[()].min(np.uint32(1))",
    "jnp.asarray(np.array(2.0, np.float32)).at[()].set(7.0)",
    "jnp.asarray(np.array(5, np.int8)).at[...].mul(3)",
    # integer_pow (a concrete scalar exponent) is XLA's binary exponentiation: accuracy and
    # overflow of complex and low-precision results as JAX's
    "jnp.power(np.complex64([-159.62584+104.086975j, -1-5.96046448e-08j]), "
    "np.array(1709, np.uint16))",
    "jnp.power(np.array([1.0001, -3.3, 0, 2.5], jnp.bfloat16), 13)",
    "jnp.power(np.float32([1.0001, -3.3, 0, np.inf, np.nan]), 1001)",
    # jit's fused multiply-add with a rank-0 operand broadcast against the others crashed
    "jax.jit(jnp.logaddexp2)(np.int32([0]), np.int32([[0]]))",
    "jax.jit(jnp.logaddexp2)(np.float32(0.5), np.float32([[0.0, 2.0]]))",
    # exp2 is exp(x * ln 2) with ln 2 rounded to x's dtype: coarse in bfloat16
    "jnp.exp2(np.array([24.5, 79.5, -3.3, 0.1, 10.7], jnp.bfloat16))",
]  # known differences pyjax does not match JAX on yet


def encode(value: Any) -> dict:
    """A result as JSON: shape, dtype, weak type and values (complex as [re, im] pairs)."""
    arr = np.asarray(value)
    wide = arr.astype(np.complex128 if arr.dtype.kind == "c" else
                      np.float64 if arr.dtype.kind == "f" or arr.dtype == np_dtype("bfloat16")
                      else np.int64 if arr.dtype.kind in "iub" else arr.dtype)
    flat = wide.ravel().tolist()
    if arr.dtype.kind == "c":
        flat = [[z.real, z.imag] for z in flat]
    return {"shape": list(arr.shape), "dtype": describe(arr.dtype, bool(getattr(
        value, "weak_type", False))), "values": flat}


def record_expression(expr: str, jnp: Any, jax: Any, np_module: Any) -> dict:
    """Evaluate a KnownDifference example with the given modules, encoded (or its error)."""
    try:
        out = eval(expr, {"jnp": jnp, "jax": jax, "np": np_module})  # noqa: S307 - test data
    except Exception as e:  # noqa: BLE001 - the class is the record
        return {"error": type(e).__name__}
    return encode(out)


def load_recorded() -> dict:
    with open(os.path.join(HERE, "data", "fuzz.json")) as f:
        return json.load(f)


# ---------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------

def _float_specials(dtype: np.dtype) -> list[float]:
    info = ml_dtypes.finfo(dtype)
    return [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 100.0, -7.25, 1e10, -1e10, math.nan, math.inf,
            -math.inf, float(info.max), -float(info.max), float(info.tiny), -float(info.tiny),
            float(info.tiny) * 64, 1e-30, 65504.0, 2.0**31, -(2.0**31)]


def _no_subnormals(arr: np.ndarray) -> np.ndarray:
    """float32/bfloat16 subnormals replaced by zeros of the same sign (see module doc)."""
    if arr.dtype.kind != "f" and arr.dtype != np_dtype("bfloat16"):
        return arr
    if arr.dtype == np.float16:
        return arr
    tiny = float(ml_dtypes.finfo(arr.dtype).tiny)
    wide = arr.astype(np.float64)
    return np.where((wide != 0) & (np.abs(wide) < tiny), np.copysign(0.0, wide),
                    wide).astype(arr.dtype)


def elements(name: str) -> st.SearchStrategy:
    """Scalar values for dtype `name`, biased to the edges."""
    dtype = np_dtype(name)
    if name == "bool":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        edges = [v for v in (0, 1, -1, 2, -2, 7, 8, 31, 32, 33, info.min, info.max, info.min + 1,
                             info.max - 1) if info.min <= v <= info.max]
        return st.one_of(st.sampled_from(edges), st.integers(max(info.min, -300),
                                                              min(info.max, 300)),
                         st.integers(int(info.min), int(info.max)))
    if dtype.kind == "c":
        # parts 0 or of moderate size: XLA's complex formulas (sinh, log1p...) cancel for
        # tiny arguments, as JAX does (only relative accuracy is lost)
        part = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 2.0]),
                         st.floats(2.0**-10, 1e3, width=32), st.floats(-1e3, -(2.0**-10), width=32))
        return st.builds(complex, part, part)
    return st.one_of(st.sampled_from(_float_specials(dtype)),
                     st.floats(-1e4, 1e4, width=32, allow_subnormal=False),
                     st.floats(width=32, allow_subnormal=False))


def finite_elements(name: str) -> st.SearchStrategy:
    """Moderate finite values (so that sums, products and moments stay informative)."""
    dtype = np_dtype(name)
    if dtype.kind in "biu" or name == "bool":
        return elements(name)
    part = st.one_of(st.integers(-4, 4).map(float), st.floats(-8, 8, width=16),
                     st.floats(-1e3, 1e3, width=16))
    return st.builds(complex, part, part) if dtype.kind == "c" else part


SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


@st.composite
def arrays(draw: Any, name: str, shape: tuple[int, ...] | None = None,
           finite: bool = False) -> np.ndarray:
    """A NumPy array of dtype `name` (shape drawn when not given), of edge values or (finite)
    moderate ones."""
    if shape is None:
        shape = draw(SHAPES)
    values = draw(st.lists(finite_elements(name) if finite else elements(name),
                           min_size=math.prod(shape), max_size=math.prod(shape)))
    dtype = np_dtype(name)
    with np.errstate(all="ignore"):
        if dtype.kind in "iub":
            arr = np.array(values, dtype=np.int64 if name != "bool" else bool).astype(dtype)
        else:
            arr = np.array(values, dtype=np.complex128 if dtype.kind == "c" else np.float64)
            arr = arr.astype(dtype)
    return _no_subnormals(arr.reshape(shape))


@st.composite
def operands(draw: Any, kind: str, shape: tuple[int, ...] | None = None) -> Any:
    """An operand of input kind `kind`: a NumPy array, or a Python scalar for weak kinds."""
    if kind in WEAK:
        base = WEAK_DTYPE[kind]
        value = draw(elements("int16" if kind == "weak_int" else base))
        if kind == "weak_float":
            value = float(_no_subnormals(np.array([value], np.float32))[0])
        return {"weak_int": int, "weak_float": float, "weak_complex": complex}[kind](value)
    return draw(arrays(kind, shape))


# ---------------------------------------------------------------------------------------------
# Reference evaluation and comparison
# ---------------------------------------------------------------------------------------------

RTOL = {"float16": 4e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-13,
        "complex64": 2e-6, "complex128": 1e-13}


def wide(x: Any) -> np.ndarray:
    """x as float64/complex128 (inexact) or unchanged (integers, bool)."""
    arr = np.asarray(x)
    if arr.dtype.kind == "c":
        return arr.astype(np.complex128)
    if arr.dtype.kind == "f" or arr.dtype == np_dtype("bfloat16"):
        return arr.astype(np.float64)
    return arr


def cast(ref: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """NumPy's value cast to JAX's result dtype, saturating float->int as XLA does."""
    ref = np.asarray(ref)
    dtype = np.dtype(dtype)
    with np.errstate(all="ignore"):
        if dtype.kind in "iu" and ref.dtype.kind in "fc":
            info = np.iinfo(dtype)
            real = np.nan_to_num(np.real(ref).astype(np.float64), nan=0.0)
            return np.clip(np.trunc(real), info.min, info.max).astype(dtype)
        return ref.astype(dtype)


def assert_values(got: Any, want: np.ndarray, *, rtol_scale: float = 1.0,
                  atol: Any = 0.0, what: str = "") -> None:
    """got equals want (already in got's dtype): exactly for bool/int; NaN where NaN,
    infinities exact, finite values within the dtype's tolerance otherwise."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=what)
        return
    rtol = RTOL[describe(got.dtype, False)] * rtol_scale
    g, w = wide(got), wide(want.astype(got.dtype))
    atol = np.broadcast_to(atol, g.shape)
    parts = [(g.real, w.real), (g.imag, w.imag)] if g.dtype.kind == "c" else [(g, w)]
    if g.dtype.kind == "c":
        scale = np.maximum(np.abs(w), np.abs(g))
        scale = np.where(np.isfinite(scale), scale, 0.0)
        nan_g = np.isnan(g.real) | np.isnan(g.imag)
        nan_w = np.isnan(w.real) | np.isnan(w.imag)
        np.testing.assert_array_equal(nan_g, nan_w, err_msg=f"{what}: NaN positions")
        keep = ~nan_g
        parts = [(p[keep], q[keep]) for p, q in parts]
        scale, atol = scale[keep], atol[keep]
    else:
        scale = np.abs(w)
    tiny = float(ml_dtypes.finfo(got.dtype if got.dtype.kind != "c" else
                                 np.dtype(got.dtype.char.lower())).tiny) if got.dtype.kind != "c" \
        else float(np.finfo(got.real.dtype).tiny)
    for p, q in parts:
        np.testing.assert_array_equal(np.isnan(p), np.isnan(q), err_msg=f"{what}: NaN positions")
        finite = np.isfinite(p) & np.isfinite(q)
        np.testing.assert_array_equal(p[~finite & ~np.isnan(p)], q[~finite & ~np.isnan(q)],
                                      err_msg=f"{what}: infinities")
        s = np.broadcast_to(scale, p.shape)[finite]
        a = atol[finite]
        err = np.abs(p[finite] - q[finite])
        bad = err > rtol * s + a + 2 * tiny
        assert not bad.any(), (f"{what}: got {p[finite][bad][:5]}, want {q[finite][bad][:5]}")


def same_bits(a: Any, b: Any, what: str = "") -> None:
    """Eager and jit results agree: exactly for bool/int, NaN for NaN and within 4 ulp for
    inexact values (jit contracts multiply-adds into fused ones, as XLA does; eager does not)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (what, a.dtype, b.dtype, a.shape, b.shape)
    if a.dtype.kind in "fc" or a.dtype == np_dtype("bfloat16"):
        eps = float(ml_dtypes.finfo(a.real.dtype if a.dtype.kind == "c" else a.dtype).eps)
        wa, wb = wide(a), wide(b)
        for p, q in ([(wa.real, wb.real), (wa.imag, wb.imag)] if a.dtype.kind == "c"
                     else [(wa, wb)]):
            with np.errstate(all="ignore"):
                same = (p == q) | (np.isnan(p) & np.isnan(q)) | (
                    np.abs(p - q) <= 4 * eps * np.maximum(np.abs(p), np.abs(q)))
            assert same.all(), (what, p[~same][:5], q[~same][:5])
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


def run_both(fn: Callable, *args: Any) -> tuple[Any, Any, BaseException | None,
                                                 BaseException | None]:
    """fn(*args) eagerly and under pyjax.jit: (eager, jitted, eager error, jit error)."""
    import pyjax
    results, errors = [], []
    for f in (fn, pyjax.jit(fn)):
        try:
            results.append(f(*args))
            errors.append(None)
        except (TypeError, ValueError, IndexError, OverflowError) as e:
            results.append(None)
            errors.append(e)
    return results[0], results[1], errors[0], errors[1]


def fuzz_settings(max_examples: int) -> settings:
    """Deterministic (derandomized, no example database), no deadline: reproducible in CI."""
    return settings(max_examples=max_examples, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])
