"""Case definitions for the JAX oracle recordings.

This module must import under real JAX (by ``record.py``) *and* under pyjax
(by the tests), so it never imports jax itself: every function receives the
modules it needs as arguments.  Arguments are built only from NumPy arrays
with explicit dtypes (``jnp.bfloat16`` for bfloat16), Python scalars, and
tuples/lists/dicts of those.

Structures
----------
``jaxpr_cases(jax, jnp, lax, np, x64=False)``
    list of ``(name, fn, args, make_jaxpr_kwargs)``; the recorded value is
    ``str(jax.make_jaxpr(fn, **make_jaxpr_kwargs)(*args))``.  With
    ``x64=True`` the list of cases recorded with ``JAX_ENABLE_X64=1`` is
    returned instead (names start with ``x64_``).
``repr_cases(jnp, np, x64=False)``
    list of ``(name, thunk)``; the thunk returns an array, whose ``repr``,
    ``str`` (and for 0-d arrays ``format``/f-string forms) are recorded.
``error_cases(jax, jnp, lax, np, x64=False)``
    list of ``(name, thunk)``; the exception class name and message raised by
    ``thunk()`` are recorded, or its result's ``repr`` when it does not raise.
``canonicalization_cases(jnp, np)``
    list of ``(name, thunk)``; the thunk returns an array (or a dtype); its
    dtype, weak_type, shape and repr are recorded (same under x64 on and off).
``PROMOTION_DTYPES`` / ``weak_scalars()``
    the inputs of the type-promotion table.
"""

PROMOTION_DTYPES = [
    "bool", "uint8", "uint16", "uint32", "uint64",
    "int8", "int16", "int32", "int64",
    "bfloat16", "float16", "float32", "float64",
    "complex64", "complex128",
]


def weak_scalars():
    """Name -> Python scalar for the three weak scalar kinds."""
    return {"weak_int": 1, "weak_float": 1.0, "weak_complex": 1j}


def _helpers(jnp, np):
    def arr(shape, dtype, start=1):
        n = 1
        for s in shape:
            n *= s
        dt = jnp.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
        if np.dtype(dt) == np.dtype(bool):
            return (np.arange(n) % 2 == 0).reshape(shape)
        return np.arange(start, start + n).astype(dt).reshape(shape)
    return arr


def jaxpr_cases(jax, jnp, lax, np, x64=False):
    if x64:
        return _jaxpr_cases_x64(jax, jnp, lax, np)
    A = _helpers(jnp, np)
    f3 = A((3,), "float32")
    g3 = A((3,), "float32", start=4)
    f23 = A((2, 3), "float32")
    f34 = A((3, 4), "float32")
    f234 = A((2, 3, 4), "float32")
    f243 = A((2, 4, 3), "float32")
    i3 = A((3,), "int32")
    j3 = A((3,), "int32", start=4)
    i23 = A((2, 3), "int32")
    i8 = A((3,), "int8")
    u8 = A((3,), "uint8")
    u32 = A((3,), "uint32")
    b3 = A((3,), "bool")
    c3 = np.array([True, True, False])
    h3 = A((3,), "float16")
    bf3 = A((3,), "bfloat16")
    c64 = A((3,), "complex64")
    f5 = A((5,), "float32")
    i0 = np.int32(1)  # a 0-d int32 used as a traced index
    f0 = np.float32(2.0)

    C = []

    def add(name, fn, *args, **kw):
        C.append((name, fn, args, kw))

    # ---- arithmetic with Python scalars (weak types) and dtype mixes ----
    add("arith_add_int_scalar", lambda x: x + 1, f3)
    add("arith_add_float_scalar", lambda x: x + 1.0, f3)
    add("arith_radd_int_scalar", lambda x: 2 + x, f3)
    add("arith_rsub_scalar", lambda x: 1 - x, f3)
    add("arith_sub_scalar", lambda x: x - 1.5, f3)
    add("arith_mul_scalar", lambda x: x * 2.5, f3)
    add("arith_div_scalar", lambda x: x / 2, f3)
    add("arith_rdiv_scalar", lambda x: 1 / x, f3)
    add("arith_add_complex_scalar", lambda x: x + 1j, f3)
    add("arith_int_add_complex_scalar", lambda x: x + 1j, i3)
    add("arith_add_f32_f32", lambda x, y: x + y, f3, g3)
    add("arith_sub_f32_f32", lambda x, y: x - y, f3, g3)
    add("arith_mul_f32_f32", lambda x, y: x * y, f3, g3)
    add("arith_div_f32_f32", lambda x, y: x / y, f3, g3)
    add("arith_add_i32_f32", lambda x, y: x + y, i3, f3)
    add("arith_add_i32_int_scalar", lambda x: x + 1, i3)
    add("arith_add_i32_float_scalar", lambda x: x + 1.5, i3)
    add("arith_add_i8_int_scalar", lambda x: x + 1, i8)
    add("arith_mul_i8_int_scalar", lambda x: x * 300, i8)
    add("arith_add_i8_i32", lambda x, y: x + y, i8, i3)
    add("arith_add_u8_i8", lambda x, y: x + y, u8, i8)
    add("arith_add_u32_i32", lambda x, y: x + y, u32, i3)
    add("arith_add_u32_u32", lambda x, y: x + y, u32, u32)
    add("arith_mul_u32_scalar", lambda x: x * 2, u32)
    add("arith_sub_u32_scalar", lambda x: x - 1, u32)
    add("arith_add_u8_float_scalar", lambda x: x + 1.0, u8)
    add("arith_add_f16_f32", lambda x, y: x + y, h3, f3)
    add("arith_add_bf16_f16", lambda x, y: x + y, bf3, h3)
    add("arith_add_bf16_scalar", lambda x: x * 2 + 1.0, bf3)
    add("arith_add_f16_i32", lambda x, y: x + y, h3, i3)
    add("arith_add_c64_f32", lambda x, y: x + y, c64, f3)
    add("arith_add_bool_bool", lambda x, y: x + y, b3, c3)
    add("arith_mul_bool_bool", lambda x, y: x * y, b3, c3)
    add("arith_add_bool_int_scalar", lambda x: x + 1, b3)
    add("arith_add_bool_f32", lambda x, y: x + y, b3, f3)
    add("arith_neg", lambda x: -x, f3)
    add("arith_pos", lambda x: +x, f3)
    add("arith_abs_builtin", lambda x: abs(x), f3)
    add("arith_pow_2", lambda x: x ** 2, f3)
    add("arith_pow_3", lambda x: x ** 3, f3)
    add("arith_pow_0", lambda x: x ** 0, f3)
    add("arith_pow_half", lambda x: x ** 0.5, f3)
    add("arith_pow_neg1", lambda x: x ** -1, f3)
    add("arith_pow_2_float", lambda x: x ** 2.0, f3)
    add("arith_rpow", lambda x: 2 ** x, f3)
    add("arith_pow_f32_f32", lambda x, y: x ** y, f3, g3)
    add("arith_pow_i32_i32", lambda x, y: x ** y, i3, j3)
    add("arith_pow_i32_2", lambda x: x ** 2, i3)
    add("arith_power_fn", lambda x: jnp.power(x, 3), f3)
    add("arith_floordiv_int", lambda x: x // 2, i3)
    add("arith_floordiv_float", lambda x: x // 2, f3)
    add("arith_floordiv_i32_i32", lambda x, y: x // y, i3, j3)
    add("arith_mod_int", lambda x: x % 3, i3)
    add("arith_mod_float", lambda x: x % 3.0, f3)
    add("arith_mod_f32_f32", lambda x, y: x % y, f3, g3)
    add("arith_truediv_int_scalar", lambda x: x / 2, i3)
    add("arith_true_divide_i32_i32", lambda x, y: jnp.true_divide(x, y), i3, j3)
    add("arith_divide_u8_u8", lambda x, y: jnp.divide(x, y), u8, u8)
    add("arith_divmod", lambda x, y: divmod(x, y), i3, j3)
    add("arith_bitwise_i32", lambda x, y: (x & y, x | y, x ^ y, ~x), i3, j3)
    add("arith_bitwise_bool", lambda x, y: (x & y, x | y, x ^ y, ~x), b3, c3)
    add("arith_shift", lambda x: (x << 1, x >> 1), i3)
    add("arith_chain", lambda x: (x * 2 + 1) / 3 - x, f3)
    add("arith_scalar_input_float", lambda x: x + 1, 1.0)
    add("arith_scalar_input_int", lambda x, y: x * y, 2, 3)
    add("arith_scalar_input_mixed", lambda x, y: x * y, 2, f3)
    add("arith_np_scalar_input", lambda x: x + 1, f0)
    add("arith_bool_scalar_input", lambda x: x + 1, True)
    add("arith_complex_scalar_input", lambda x: x * 2, 1j)
    add("arith_0d_with_1d", lambda x, y: x * y, f0, f3)
    add("arith_broadcast_2d_1d", lambda x, y: x + y, f23, f3)
    add("arith_broadcast_col", lambda x, y: x + y, A((2, 1), "float32"), f3)
    add("arith_add_fn", lambda x, y: jnp.add(x, y), f3, g3)
    add("arith_subtract_multiply_fn",
        lambda x, y: jnp.multiply(jnp.subtract(x, y), 2), f3, g3)
    add("arith_negative_fn", lambda x: jnp.negative(x), i3)

    # ---- unary math ----
    for nm in ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "arcsin",
               "arctan", "sinh", "abs", "negative", "sign", "floor", "ceil",
               "round", "rint", "exp2", "log1p", "expm1", "log2", "log10",
               "square", "reciprocal", "cbrt", "isnan", "isfinite", "isinf",
               "logical_not", "signbit", "trunc", "deg2rad", "conj", "real",
               "imag"]:
        add("unary_" + nm, (lambda f: (lambda x: f(x)))(getattr(jnp, nm)), f3)
    for nm in ["exp", "sqrt", "sin", "abs", "sign", "floor", "negative",
               "square", "round", "reciprocal"]:
        add("unary_int_" + nm, (lambda f: (lambda x: f(x)))(getattr(jnp, nm)),
            i3)
    add("unary_round_decimals", lambda x: jnp.round(x, 2), f3)
    add("unary_abs_complex", lambda x: jnp.abs(x), c64)
    add("unary_exp_f16", lambda x: jnp.exp(x), h3)
    add("unary_exp_bool", lambda x: jnp.exp(x), b3)
    add("unary_abs_u8", lambda x: jnp.abs(x), u8)
    add("binary_arctan2", lambda x, y: jnp.arctan2(x, y), f3, g3)
    add("binary_hypot", lambda x, y: jnp.hypot(x, y), f3, g3)
    add("binary_logaddexp", lambda x, y: jnp.logaddexp(x, y), f3, g3)

    # ---- comparisons / logical / where / max / clip ----
    add("cmp_gt_scalar", lambda x: x > 0, f3)
    add("cmp_lt_scalar", lambda x: x < 1.5, f3)
    add("cmp_ge_le", lambda x, y: (x >= y, x <= y), f3, g3)
    add("cmp_eq_ne", lambda x, y: (x == y, x != y), f3, g3)
    add("cmp_int_float", lambda x, y: x < y, i3, f3)
    add("cmp_int_float_scalar", lambda x: x == 1.5, i3)
    add("cmp_bool_eq", lambda x, y: x == y, b3, c3)
    add("cmp_equal_fn", lambda x, y: jnp.equal(x, y), i3, j3)
    add("logical_and", lambda x, y: jnp.logical_and(x, y), b3, c3)
    add("logical_or", lambda x, y: jnp.logical_or(x, y), b3, c3)
    add("logical_xor", lambda x, y: jnp.logical_xor(x, y), b3, c3)
    add("logical_not", lambda x: jnp.logical_not(x), b3)
    add("logical_and_float", lambda x, y: jnp.logical_and(x, y), f3, g3)
    add("logical_not_int", lambda x: jnp.logical_not(x), i3)
    add("where_basic", lambda x: jnp.where(x > 2, x, 0), f3)
    add("where_arrays", lambda c, x, y: jnp.where(c, x, y), b3, f3, g3)
    add("where_scalars", lambda c: jnp.where(c, 1.0, 2), b3)
    add("where_mixed", lambda c, x, y: jnp.where(c, x, y), b3, i3, f3)
    add("where_broadcast", lambda x: jnp.where(x > 0, x, x[0]), f23)
    add("maximum", lambda x, y: jnp.maximum(x, y), f3, g3)
    add("minimum_scalar", lambda x: jnp.minimum(x, 2), f3)
    add("maximum_int_float", lambda x, y: jnp.maximum(x, y), i3, f3)
    add("clip_both", lambda x: jnp.clip(x, 0, 1), f3)
    add("clip_float_bounds", lambda x: jnp.clip(x, 0.5, 2.5), f3)
    add("clip_min_only", lambda x: jnp.clip(x, min=0), f3)
    add("clip_int", lambda x: jnp.clip(x, 0, 2), i3)
    add("clip_method", lambda x: x.clip(0, 1), f3)

    # ---- reductions ----
    add("reduce_sum_none", lambda x: jnp.sum(x), f23)
    add("reduce_sum_axis0", lambda x: jnp.sum(x, axis=0), f23)
    add("reduce_sum_axis1", lambda x: jnp.sum(x, axis=1), f23)
    add("reduce_sum_axis_neg", lambda x: jnp.sum(x, axis=-1), f234)
    add("reduce_sum_axis_tuple", lambda x: jnp.sum(x, axis=(0, 2)), f234)
    add("reduce_sum_keepdims", lambda x: jnp.sum(x, axis=1, keepdims=True), f23)
    add("reduce_sum_keepdims_none", lambda x: jnp.sum(x, keepdims=True), f23)
    add("reduce_sum_dtype", lambda x: jnp.sum(x, dtype=jnp.float32), i23)
    add("reduce_sum_int", lambda x: jnp.sum(x), i23)
    add("reduce_sum_int8", lambda x: jnp.sum(x), i8)
    add("reduce_sum_uint8", lambda x: jnp.sum(x), u8)
    add("reduce_sum_bool", lambda x: jnp.sum(x), b3)
    add("reduce_sum_f16", lambda x: jnp.sum(x), h3)
    add("reduce_sum_method", lambda x: x.sum(axis=0), f23)
    add("reduce_sum_empty_axes", lambda x: jnp.sum(x, axis=()), f23)
    add("reduce_mean_none", lambda x: jnp.mean(x), f23)
    add("reduce_mean_axis", lambda x: jnp.mean(x, axis=0), f23)
    add("reduce_mean_keepdims", lambda x: jnp.mean(x, axis=-1, keepdims=True), f23)
    add("reduce_mean_int", lambda x: jnp.mean(x), i23)
    add("reduce_mean_dtype", lambda x: jnp.mean(x, dtype=jnp.float16), f23)
    add("reduce_max_none", lambda x: jnp.max(x), f23)
    add("reduce_max_axis_keepdims", lambda x: jnp.max(x, axis=1, keepdims=True), f23)
    add("reduce_min_axis", lambda x: jnp.min(x, axis=0), i23)
    add("reduce_prod", lambda x: jnp.prod(x), f23)
    add("reduce_prod_axis", lambda x: jnp.prod(x, axis=1), i23)
    add("reduce_argmax_none", lambda x: jnp.argmax(x), f23)
    add("reduce_argmax_axis", lambda x: jnp.argmax(x, axis=1), f23)
    add("reduce_argmin_axis0", lambda x: jnp.argmin(x, axis=0), i23)
    add("reduce_argmax_keepdims", lambda x: jnp.argmax(x, axis=1, keepdims=True), f23)
    add("reduce_all", lambda x: jnp.all(x), b3)
    add("reduce_any_axis", lambda x: jnp.any(x > 2, axis=0), f23)
    add("reduce_all_float", lambda x: jnp.all(x), f3)
    add("reduce_var", lambda x: jnp.var(x), f23)
    add("reduce_std_axis", lambda x: jnp.std(x, axis=0), f23)
    add("reduce_cumsum", lambda x: jnp.cumsum(x), f3)
    add("reduce_max_method", lambda x: x.max(), f3)

    # ---- dot / matmul ----
    add("dot_1d_1d", lambda x, y: jnp.dot(x, y), f3, g3)
    add("dot_2d_1d", lambda x, y: jnp.dot(x, y), f23, f3)
    add("dot_1d_2d", lambda x, y: jnp.dot(x, y), f3, f34)
    add("dot_2d_2d", lambda x, y: jnp.dot(x, y), f23, f34)
    add("matmul_op_2d", lambda x, y: x @ y, f23, f34)
    add("matmul_3d_3d", lambda x, y: jnp.matmul(x, y), f234, f243)
    add("matmul_3d_2d", lambda x, y: x @ y, f234, f34.T.copy())
    add("matmul_1d_1d", lambda x, y: x @ y, f3, g3)
    add("dot_int32", lambda x, y: jnp.dot(x, y), i3, j3)
    add("dot_int8", lambda x, y: jnp.dot(x, y), i8, i8)
    add("dot_mixed_i32_f32", lambda x, y: jnp.dot(x, y), i3, f3)
    add("dot_bool", lambda x, y: jnp.dot(x, y), b3, c3)
    add("dot_scalar", lambda x: jnp.dot(x, 2.0), f3)
    add("outer", lambda x, y: jnp.outer(x, y), f3, g3)
    add("inner", lambda x, y: jnp.inner(x, y), f23, f23)
    add("tensordot", lambda x, y: jnp.tensordot(x, y, axes=1), f23, f34)
    add("einsum_ij_jk", lambda x, y: jnp.einsum("ij,jk->ik", x, y), f23, f34)
    add("vdot", lambda x, y: jnp.vdot(x, y), f3, g3)

    # ---- shape manipulation ----
    add("shape_reshape", lambda x: jnp.reshape(x, (3, 2)), f23)
    add("shape_reshape_minus1", lambda x: x.reshape(-1), f23)
    add("shape_reshape_method_args", lambda x: x.reshape(3, -1), f23)
    add("shape_reshape_same", lambda x: x.reshape(2, 3), f23)
    add("shape_reshape_to_scalar", lambda x: x.reshape(()), A((1,), "float32"))
    add("shape_transpose", lambda x: jnp.transpose(x), f234)
    add("shape_transpose_axes", lambda x: jnp.transpose(x, (1, 0, 2)), f234)
    add("shape_T", lambda x: x.T, f23)
    add("shape_T_1d", lambda x: x.T, f3)
    add("shape_swapaxes", lambda x: jnp.swapaxes(x, 0, 2), f234)
    add("shape_moveaxis", lambda x: jnp.moveaxis(x, 0, -1), f234)
    add("shape_stack", lambda x, y: jnp.stack([x, y]), f3, g3)
    add("shape_stack_axis1", lambda x, y: jnp.stack([x, y], axis=1), f3, g3)
    add("shape_stack_mixed", lambda x, y: jnp.stack([x, y]), i3, f3)
    add("shape_concatenate", lambda x, y: jnp.concatenate([x, y]), f3, g3)
    add("shape_concatenate_axis1", lambda x: jnp.concatenate([x, x], axis=1), f23)
    add("shape_concatenate_mixed", lambda x, y: jnp.concatenate([x, y]), i3, f3)
    add("shape_column_stack", lambda x, y: jnp.column_stack([x, y]), f3, g3)
    add("shape_hstack", lambda x, y: jnp.hstack([x, y]), f3, g3)
    add("shape_vstack", lambda x, y: jnp.vstack([x, y]), f3, g3)
    add("shape_atleast_1d_scalar", lambda x: jnp.atleast_1d(x), f0)
    add("shape_atleast_1d_noop", lambda x: jnp.atleast_1d(x), f3)
    add("shape_atleast_2d", lambda x: jnp.atleast_2d(x), f3)
    add("shape_atleast_3d_1d", lambda x: jnp.atleast_3d(x), f3)
    add("shape_atleast_3d_2d", lambda x: jnp.atleast_3d(x), f23)
    add("shape_atleast_2d_multi", lambda x, y: jnp.atleast_2d(x, y), f0, f3)
    add("shape_squeeze", lambda x: jnp.squeeze(x), A((1, 3, 1), "float32"))
    add("shape_squeeze_axis", lambda x: jnp.squeeze(x, axis=0), A((1, 3, 1), "float32"))
    add("shape_expand_dims", lambda x: jnp.expand_dims(x, 0), f3)
    add("shape_expand_dims_neg", lambda x: jnp.expand_dims(x, -1), f23)
    add("shape_expand_dims_tuple", lambda x: jnp.expand_dims(x, (0, 2)), f3)
    add("shape_ravel", lambda x: jnp.ravel(x), f23)
    add("shape_flatten", lambda x: x.flatten(), f234)
    add("shape_broadcast_to", lambda x: jnp.broadcast_to(x, (2, 3)), f3)
    add("shape_broadcast_to_same", lambda x: jnp.broadcast_to(x, (3,)), f3)
    add("shape_broadcast_to_scalar", lambda x: jnp.broadcast_to(x, (2, 2)), f0)
    add("shape_broadcast_arrays", lambda x, y: jnp.broadcast_arrays(x, y), f23, f3)
    add("shape_flip", lambda x: jnp.flip(x, 0), f23)
    add("shape_tile", lambda x: jnp.tile(x, 2), f3)
    add("shape_repeat", lambda x: jnp.repeat(x, 2), f3)
    add("shape_roll", lambda x: jnp.roll(x, 1), f3)
    add("shape_split", lambda x: jnp.split(x, 3), A((6,), "float32"))

    # ---- creation inside traced fn ----
    add("create_zeros", lambda x: jnp.zeros(3) + x, f3)
    add("create_zeros_only", lambda: jnp.zeros((2, 3)))
    add("create_ones_int", lambda: jnp.ones(3, dtype=jnp.int32))
    add("create_full", lambda x: jnp.full((3,), 7) * x, f3)
    add("create_full_float", lambda: jnp.full((2, 2), 1.5))
    add("create_full_traced_value", lambda x: jnp.full((2, 2), x), f0)
    add("create_arange", lambda x: jnp.arange(3) + x, f3)
    add("create_arange_start_stop_step", lambda: jnp.arange(1, 10, 2))
    add("create_arange_float", lambda: jnp.arange(0.0, 1.0, 0.25))
    add("create_linspace", lambda: jnp.linspace(0, 1, 5))
    add("create_linspace_traced", lambda x: jnp.linspace(0, x, 5), f0)
    add("create_eye", lambda: jnp.eye(3))
    add("create_eye_k", lambda: jnp.eye(3, 4, k=1, dtype=jnp.int32))
    add("create_identity", lambda x: jnp.identity(3) * x, f0)
    add("create_zeros_like", lambda x: jnp.zeros_like(x), f3)
    add("create_ones_like_dtype", lambda x: jnp.ones_like(x, dtype=jnp.int32), f3)
    add("create_full_like", lambda x: jnp.full_like(x, 2), f3)
    add("create_full_like_traced", lambda x, v: jnp.full_like(x, v), f3, f0)
    add("create_array_of_tracers", lambda x, y: jnp.array([x, y]), f0, np.float32(3.0))
    add("create_array_tracers_and_consts", lambda x: jnp.array([x, 1.0, 2]), f0)
    add("create_array_of_1d_tracers", lambda x: jnp.array([x, x]), f3)
    add("create_asarray_tracer", lambda x: jnp.asarray(x), f3)
    add("create_array_const_list", lambda x: x + jnp.array([1.0, 2.0, 3.0]), f3)
    add("create_astype_int", lambda x: x.astype(jnp.int32), f3)
    add("create_astype_bool", lambda x: x.astype(bool), f3)
    add("create_astype_same", lambda x: x.astype(jnp.float32), f3)
    add("create_astype_bf16", lambda x: x.astype(jnp.bfloat16), f3)
    add("create_astype_float_py", lambda x: x.astype(float), i3)
    add("create_asarray_dtype", lambda x: jnp.asarray(x, dtype=jnp.float16), f3)
    add("create_float32_ctor", lambda x: jnp.float32(x), i3)
    add("create_tri", lambda: jnp.tri(3))

    # ---- indexing ----
    add("index_int", lambda x: x[0], f3)
    add("index_int_2d", lambda x: x[0], f23)
    add("index_neg", lambda x: x[-1], f3)
    add("index_slice", lambda x: x[1:3], f5)
    add("index_slice_open", lambda x: x[1:], f5)
    add("index_slice_step", lambda x: x[::2], f5)
    add("index_reverse", lambda x: x[::-1], f5)
    add("index_newaxis", lambda x: x[:, None], f3)
    add("index_none_front", lambda x: x[None], f3)
    add("index_ellipsis", lambda x: x[..., 0], f234)
    add("index_two_ints", lambda x: x[1, 2], f23)
    add("index_col", lambda x: x[:, 1], f23)
    add("index_int_slice", lambda x: x[0, ::2], f23)
    add("index_traced_int", lambda x, i: x[i], f3, i0)
    add("index_traced_int_2d", lambda x, i: x[i], f23, i0)
    add("index_traced_two", lambda x, i, j: x[i, j], f23, i0, np.int32(2))
    add("index_int_array_jnp", lambda x: x[jnp.array([0, 2])], f3)
    add("index_int_array_np", lambda x: x[np.array([0, 2])], f3)
    add("index_traced_int_array", lambda x, i: x[i], f3, np.array([0, 2], dtype=np.int32))
    add("index_bool_mask_np", lambda x: x[np.array([True, False, True])], f3)
    add("index_list", lambda x: x[[0, 1]], f3)
    add("at_set", lambda x: x.at[0].set(1.0), f3)
    add("at_set_traced", lambda x, i, v: x.at[i].set(v), f3, i0, f0)
    add("at_add", lambda x: x.at[1].add(2.0), f3)
    add("at_multiply", lambda x: x.at[1].multiply(2.0), f3)
    add("at_min", lambda x: x.at[1].min(0.0), f3)
    add("at_max", lambda x: x.at[1].max(0.0), f3)
    add("at_get", lambda x: x.at[1].get(), f3)
    add("at_set_slice", lambda x: x.at[1:3].set(0), f5)
    add("at_add_array_idx", lambda x: x.at[jnp.array([0, 2])].add(1), f3)
    add("at_set_2d", lambda x: x.at[0, 1].set(5.0), f23)
    add("index_dynamic_slice_fn", lambda x, i: lax.dynamic_slice(x, (i,), (2,)), f5, i0)
    add("index_take", lambda x: jnp.take(x, jnp.array([2, 0])), f3)

    # ---- constants ----
    add("const_pi", lambda x: x * jnp.pi, f3)
    add("const_e", lambda x: x + jnp.e, f3)
    add("const_inf_nan", lambda x: jnp.where(x > 1, jnp.inf, jnp.nan), f3)
    add("const_return_scalar", lambda x: 1.0, f3)
    add("const_return_int", lambda: 3)
    add("const_return_np_array", lambda: np.ones(2, dtype=np.float32))
    add("const_return_jnp_array", lambda x: jnp.ones(3), f3)

    # ---- constvars: captured non-scalar arrays ----
    cap_np = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    cap_np2 = np.array([[1, 2], [3, 4]], dtype=np.int32)
    cap_np0 = np.float32(3.0)
    cap_jnp = jnp.array([4.0, 5.0, 6.0], dtype=jnp.float32)
    add("constvar_np", lambda x: x + cap_np, f3)
    add("constvar_jnp", lambda x: x * cap_jnp, f3)
    add("constvar_two", lambda x: x + cap_np + cap_jnp, f3)
    add("constvar_int_2d", lambda x: x @ cap_np2, i23[:, :2].copy())
    add("constvar_np_scalar", lambda x: x + cap_np0, f3)
    add("constvar_f64_np", lambda x: x + np.array([1.0, 2.0, 3.0]), f3)
    add("constvar_int64_np", lambda x: x + np.array([1, 2, 3]), i3)

    # ---- jit / nesting / static args ----
    g_jit = jax.jit(lambda x: x * 2)

    def inner_named(x, y):
        return x * y + 1

    inner_named_jit = jax.jit(inner_named)

    def with_static(x, n):
        return x * n

    with_static_jit = jax.jit(with_static, static_argnums=1)
    with_static_name_jit = jax.jit(with_static, static_argnames="n")
    add("jit_nested_lambda", lambda x: g_jit(x) + 1, f3)
    add("jit_nested_named", lambda x: inner_named_jit(x, x), f3)
    add("jit_nested_twice", lambda x: inner_named_jit(x, 2.0) + inner_named_jit(x, 3.0), f3)
    add("jit_nested_static", lambda x: with_static_jit(x, 3), f3)
    add("jit_nested_static_argnames", lambda x: with_static_name_jit(x, n=3), f3)
    add("jit_outer", jax.jit(inner_named), f3, g3)
    add("jit_double_nested",
        lambda x: jax.jit(lambda y: inner_named_jit(y, y) * 2)(x), f3)
    add("jit_pytree", lambda x: jax.jit(lambda d: {"s": d["a"] + d["b"]})({"a": x, "b": x}), f3)
    add("jit_nested_capture", lambda x: jax.jit(lambda y: y + cap_np)(x), f3)
    add("jit_scalar_arg", lambda x: g_jit(x), 2.0)

    # ---- pytrees ----
    add("tree_dict_in", lambda d: d["a"] + d["b"], {"b": f3, "a": g3})
    add("tree_tuple_out", lambda x: (x, x + 1), f3)
    add("tree_dict_out", lambda x: {"b": x, "a": x * 2}, f3)
    add("tree_nested_in", lambda t: t[0] * t[1][0] - t[1][1], (f3, (g3, f3)))
    add("tree_list_in_out", lambda l: [l[1], l[0]], [f3, i3])
    add("tree_none_leaf", lambda x, n: x, f3, None)

    # ---- misc structure ----
    add("misc_identity", lambda x: x, f3)
    add("misc_return_twice", lambda x: (x, x), f3)
    add("misc_unused_arg", lambda x, y: y, f3, i3)
    add("misc_allclose", lambda x, y: jnp.allclose(x, y), f3, g3)
    add("misc_isclose_equal_nan", lambda x, y: jnp.isclose(x, y, equal_nan=True), f3, g3)
    add("misc_no_args_const", lambda: jnp.float32(1))
    add("misc_many_args", lambda a, b, c, d, e: a + b + c + d + e, f3, f3, f3, f3, f3)

    def long_fn(x, y, z):
        a = jnp.sin(x) * jnp.cos(y) + jnp.tanh(z)
        b = jnp.exp(a) / (1.0 + jnp.abs(a))
        c = jnp.transpose(b, (2, 0, 1))
        return jnp.sum(c * c, axis=(0, 1)), c.reshape(-1, 6), jnp.max(b)

    add("misc_long_wrap", long_fn, f234, f234, f234)
    add("misc_many_vars",
        lambda x: sum((x * k for k in range(30)), start=x), f3)
    add("misc_static_argnums", lambda x, n: x * n, f3, 3, static_argnums=(1,))
    add("misc_static_argnums_shape", lambda x, n: jnp.zeros(n) + x, f0, 4,
        static_argnums=1)
    add("misc_big_shapes", lambda x: x.reshape(10, 100, 100).sum(0),
        np.ones((100000,), np.float32))

    # ---- lax direct calls ----
    add("lax_add", lambda x, y: lax.add(x, y), f3, g3)
    add("lax_add_scalar", lambda x: lax.add(x, 1.0), f3)
    add("lax_mul", lambda x, y: lax.mul(x, y), i3, j3)
    add("lax_sub", lambda x, y: lax.sub(x, y), f3, g3)
    add("lax_div_int", lambda x, y: lax.div(x, y), i3, j3)
    add("lax_rem", lambda x, y: lax.rem(x, y), i3, j3)
    add("lax_neg", lambda x: lax.neg(x), f3)
    add("lax_max", lambda x, y: lax.max(x, y), f3, g3)
    add("lax_min", lambda x, y: lax.min(x, y), f3, g3)
    add("lax_pow", lambda x, y: lax.pow(x, y), f3, g3)
    add("lax_convert_element_type", lambda x: lax.convert_element_type(x, jnp.int32), f3)
    add("lax_convert_element_type_same", lambda x: lax.convert_element_type(x, jnp.float32), f3)
    add("lax_convert_element_type_bool", lambda x: lax.convert_element_type(x, jnp.bool_), i3)
    add("lax_bitcast_convert_type", lambda x: lax.bitcast_convert_type(x, jnp.int32), f3)
    add("lax_broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3), (1,)), f3)
    add("lax_broadcast_in_dim_scalar", lambda x: lax.broadcast_in_dim(x, (2, 3), ()), f0)
    add("lax_broadcast", lambda x: lax.broadcast(x, (2,)), f3)
    add("lax_reshape", lambda x: lax.reshape(x, (3, 2)), f23)
    add("lax_reshape_dimensions", lambda x: lax.reshape(x, (3, 2), dimensions=(1, 0)), f23)
    add("lax_dot_general", lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ()))), f23, f34)
    add("lax_dot_general_batch",
        lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))), f234, f243)
    add("lax_dot_general_pref",
        lambda x, y: lax.dot_general(x, y, (((0,), (0,)), ((), ())),
                                     preferred_element_type=jnp.float32), i3, j3)
    add("lax_dot", lambda x, y: lax.dot(x, y), f23, f34)
    add("lax_reduce_sum_via_jnp", lambda x: jnp.sum(x, axis=(0, 1)), f23)
    add("lax_reduce_max", lambda x: lax.reduce_max(x, (0,)), f23)
    add("lax_reduce_sum", lambda x: lax.reduce_sum(x, (1,)), f23)
    add("lax_argmax", lambda x: lax.argmax(x, 0, jnp.int32), f23)
    add("lax_select_n", lambda p, x, y: lax.select_n(p, x, y), b3, f3, g3)
    add("lax_select_n_int_pred", lambda p, x, y, z: lax.select_n(p, x, y, z),
        np.array([0, 1, 2], np.int32), f3, g3, f3)
    add("lax_select", lambda p, x, y: lax.select(p, x, y), b3, f3, g3)
    add("lax_iota", lambda: lax.iota(jnp.int32, 5))
    add("lax_broadcasted_iota", lambda: lax.broadcasted_iota(jnp.float32, (2, 3), 1))
    add("lax_squeeze", lambda x: lax.squeeze(x, (0,)), A((1, 3), "float32"))
    add("lax_expand_dims", lambda x: lax.expand_dims(x, (0,)), f3)
    add("lax_slice", lambda x: lax.slice(x, (1,), (3,)), f5)
    add("lax_slice_strides", lambda x: lax.slice(x, (0, 0), (2, 3), (1, 2)), f23)
    add("lax_slice_in_dim", lambda x: lax.slice_in_dim(x, 1, 3, axis=1), f23)
    add("lax_index_in_dim", lambda x: lax.index_in_dim(x, 1, axis=0, keepdims=False), f23)
    add("lax_dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i, 0), (1, 2)), f23, i0)
    add("lax_dynamic_slice_const_idx", lambda x: lax.dynamic_slice(x, (1,), (2,)), f5)
    add("lax_dynamic_update_slice",
        lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)), f5, A((2,), "float32"), i0)
    add("lax_dynamic_index_in_dim", lambda x, i: lax.dynamic_index_in_dim(x, i, 0, False), f23, i0)
    add("lax_gather_via_index", lambda x, i: x[i, 1:], f23, i0)
    add("lax_concatenate", lambda x, y: lax.concatenate([x, y], 0), f3, g3)
    add("lax_concatenate_2d", lambda x: lax.concatenate([x, x, x], 1), f23)
    add("lax_pad", lambda x: lax.pad(x, 0.0, [(1, 2, 0)]), f3)
    add("lax_pad_interior_neg", lambda x: lax.pad(x, jnp.float32(-1), [(0, 0, 0), (-1, 1, 1)]), f23)
    add("lax_pad_traced_value", lambda x, v: lax.pad(x, v, [(1, 1, 0)]), f3, f0)
    add("lax_rev", lambda x: lax.rev(x, (0,)), f23)
    add("lax_transpose", lambda x: lax.transpose(x, (1, 0)), f23)
    add("lax_integer_pow", lambda x: lax.integer_pow(x, 3), f3)
    add("lax_integer_pow_neg", lambda x: lax.integer_pow(x, -2), f3)
    add("lax_exp2", lambda x: lax.exp2(x), f3)
    add("lax_rsqrt", lambda x: lax.rsqrt(x), f3)
    add("lax_square", lambda x: lax.square(x), f3)
    add("lax_logistic", lambda x: lax.logistic(x), f3)
    add("lax_erf", lambda x: lax.erf(x), f3)
    add("lax_erf_inv", lambda x: lax.erf_inv(x), f3)
    add("lax_sign_abs", lambda x: (lax.sign(x), lax.abs(x)), i3)
    add("lax_sqrt_cbrt", lambda x: (lax.sqrt(x), lax.cbrt(x)), f3)
    add("lax_clamp", lambda x: lax.clamp(0.0, x, 2.0), f3)
    add("lax_full", lambda: lax.full((2, 2), 3.0))
    add("lax_full_like", lambda x: lax.full_like(x, 0), f3)
    add("lax_stop_gradient", lambda x: lax.stop_gradient(x), f3)
    add("lax_shift_left", lambda x: lax.shift_left(x, np.int32(2)), i3)
    add("lax_shift_right_logical", lambda x: lax.shift_right_logical(x, np.uint32(1)), u32)
    add("lax_bitwise", lambda x, y: (lax.bitwise_and(x, y), lax.bitwise_not(x)), i3, j3)
    add("lax_comparisons", lambda x, y: (lax.lt(x, y), lax.eq(x, y), lax.ne(x, y)), f3, g3)
    add("lax_nextafter", lambda x, y: lax.nextafter(x, y), f3, g3)
    add("lax_sort", lambda x: lax.sort(x), f3)
    add("lax_cumsum", lambda x: lax.cumsum(x, 0), f3)
    add("lax_tanh_tan", lambda x: (lax.tanh(x), lax.tan(x)), f3)
    add("lax_floor_ceil_round", lambda x: (lax.floor(x), lax.ceil(x), lax.round(x)), f3)
    add("lax_is_finite", lambda x: lax.is_finite(x), f3)
    add("lax_cond", lambda p, x: lax.cond(p, lambda v: v + 1, lambda v: v - 1, x),
        True, f3)
    add("lax_fori_loop", lambda x: lax.fori_loop(0, 3, lambda i, v: v * 2, x), f3)
    add("lax_while_loop", lambda x: lax.while_loop(lambda v: v < 10, lambda v: v + 1, x), f0)
    add("lax_scan", lambda c, xs: lax.scan(lambda c, x: (c + x, c * x), c, xs), f0, f3)

    # ---- constants: Arrays closed over are constvars (a weak one converted by an equation);
    # constants made while tracing (jnp.float32(3.), NumPy scalars) are literals
    c_strong, c_weak, c_vec = jnp.float32(2.), jnp.asarray(3.0), jnp.arange(3.0)
    add("closed_over_scalars", lambda x: x * c_strong + c_weak, f3)
    add("closed_over_vector_and_scalar", lambda x: (x + c_vec) * c_strong, f3)
    add("constants_made_inside", lambda x: x * jnp.asarray(2.0) + jnp.float32(3.), f3)
    add("numpy_scalar_constants", lambda x: x * np.float32(5.) * np.array(6., np.float32), f3)
    # one NumPy array closed over several times (and inside nested bodies) is one constvar
    n_vec = np.array([1.0, 2.0, 3.0], np.float32)
    add("numpy_constant_reused", lambda x: x * n_vec + n_vec, f3)
    add("numpy_constant_in_bodies", lambda x: lax.cond(
        x[0] > 0, lambda: x * n_vec, lambda: x) + lax.cond(
        x[0] > 0, lambda: x + n_vec, lambda: x) + n_vec, f3)
    add("numpy_constant_grad", jax.grad(lambda x: jnp.sum(lax.cond(
        x[0] > 0, lambda: x * n_vec, lambda: x) * n_vec)), f3)
    n_mat = np.arange(9, dtype=np.float32).reshape(3, 3)
    add("numpy_constant_two_products", lambda x: jnp.dot(n_mat, x) + n_mat @ x, f3)
    add("numpy_constant_linear_transpose", lambda x: jnp.dot(n_mat, x) + jax.linear_transpose(
        lambda y: jnp.dot(n_mat, y), x)(x)[0], f3)
    # the partial evaluation staging a function to transpose keeps an identity broadcast (its
    # transpose: a reduce_sum over no axes), which plain staging forwards
    add("linear_transpose_identity_broadcast", lambda x: jax.linear_transpose(
        lambda y: lax.broadcast_in_dim(y, (3,), (0,)) * n_vec, x)(x)[0], f3)

    # weakly typed Python constants: JAX keeps the Python number (printed 0.01, not float32's
    # 0.009999999776482582); strong or converted ones print their converted value
    add("weak_python_float_times_weak", lambda x: 0.01 * x, 0.3)
    add("weak_full_like_of_weak", lambda x: lax.select(x > 0, x, lax.full_like(x, 0.01)), 0.3)
    add("weak_full", lambda x: lax.full((), 0.01) + x, f3)
    add("weak_full_like_strong", lambda x: lax.full_like(x, 0.01) + x, f3)
    add("weak_in_inline_jit", lambda x: jax.jit(lambda y: 0.1 * y, inline=True)(x), 0.3)
    add("weak_complex", lambda x: x * (0.1 + 0.2j), 0.5j)
    add("weak_float_into_bf16", lambda x: x.astype(jnp.bfloat16) * 0.01, 0.3)
    add("weak_sum_of_floats", lambda x: x + (0.1 + 0.2), 0.3)

    # ---- transformations (for later) ----
    add("ad_grad", lambda x: jax.grad(lambda y: jnp.sum(y ** 2))(x), f3)
    add("ad_grad_sin", lambda x: jax.grad(lambda y: jnp.sin(y) * y)(x), f0)
    add("ad_jvp", lambda x, t: jax.jvp(jnp.sin, (x,), (t,)), f3, g3)
    add("ad_vjp", lambda x, t: jax.vjp(jnp.exp, x)[1](t), f3, g3)
    add("vmap_basic", lambda x: jax.vmap(lambda y: jnp.dot(y, y))(x), f23)
    add("vmap_in_axes",
        lambda x, y: jax.vmap(lambda a, b: a + b, in_axes=(0, None))(x, y), f23, f3)
    return C


def _jaxpr_cases_x64(jax, jnp, lax, np):
    A = _helpers(jnp, np)
    f3 = A((3,), "float32")
    d3 = A((3,), "float64")
    i3 = A((3,), "int32")
    l3 = A((3,), "int64")
    u32 = A((3,), "uint32")
    u64 = A((3,), "uint64")
    d23 = A((2, 3), "float64")
    C = []

    def add(name, fn, *args, **kw):
        C.append((name, fn, args, kw))

    add("x64_f64_add_int_scalar", lambda x: x + 1, d3)
    add("x64_f64_add_float_scalar", lambda x: x * 2.5, d3)
    add("x64_f32_add_float_scalar", lambda x: x + 1.0, f3)
    add("x64_i64_add_int_scalar", lambda x: x + 1, l3)
    add("x64_i32_add_int_scalar", lambda x: x + 1, i3)
    add("x64_f32_add_f64", lambda x, y: x + y, f3, d3)
    add("x64_i32_add_i64", lambda x, y: x + y, i3, l3)
    add("x64_u32_add_i32", lambda x, y: x + y, u32, i3)
    add("x64_u64_add_i64", lambda x, y: x + y, u64, l3)
    add("x64_i64_add_f32", lambda x, y: x + y, l3, f3)
    add("x64_scalar_input_float", lambda x: x + 1, 1.0)
    add("x64_scalar_input_int", lambda x: x * 2, 3)
    add("x64_zeros_default", lambda: jnp.zeros(3))
    add("x64_arange", lambda: jnp.arange(4))
    add("x64_arange_float", lambda: jnp.arange(0.0, 1.0, 0.5))
    add("x64_linspace", lambda: jnp.linspace(0, 1, 3))
    add("x64_sum_i32", lambda x: jnp.sum(x), i3)
    add("x64_sum_u32", lambda x: jnp.sum(x), u32)
    add("x64_mean_i64", lambda x: jnp.mean(x), l3)
    add("x64_mean_f32", lambda x: jnp.mean(x), f3)
    add("x64_dot_f64", lambda x, y: x @ y, d23, d23.T.copy())
    add("x64_argmax", lambda x: jnp.argmax(x), d3)
    add("x64_index_int", lambda x: x[1], d3)
    add("x64_astype_float", lambda x: x.astype(float), i3)
    add("x64_pow_half", lambda x: x ** 0.5, l3)
    add("x64_truediv_int", lambda x: x / 2, l3)
    add("x64_constvar_f64", lambda x: x + np.array([1.0, 2.0, 3.0]), f3)
    add("x64_at_add", lambda x: x.at[0].add(1), l3)
    add("x64_pi", lambda x: x * jnp.pi, d3)
    return C


def repr_cases(jnp, np, x64=False):
    if x64:
        return [
            ("x64_float64_1d", lambda: jnp.array([1.5, 2.25, 3.0])),
            ("x64_float64_pi", lambda: jnp.array([np.pi, np.e])),
            ("x64_float64_0d", lambda: jnp.array(1.0)),
            ("x64_float64_0d_strong", lambda: jnp.array(np.float64(0.1))),
            ("x64_float64_third", lambda: jnp.array([1 / 3, 2 / 3])),
            ("x64_int64_1d", lambda: jnp.arange(5)),
            ("x64_int64_big", lambda: jnp.array([2 ** 40, -2 ** 40])),
            ("x64_int64_0d_weak", lambda: jnp.asarray(30)),
            ("x64_uint64", lambda: jnp.array([1, 2], dtype=jnp.uint64)),
            ("x64_complex128", lambda: jnp.array([1 + 2j, 3.5 - 1j])),
            ("x64_float64_sci", lambda: jnp.array([1e-10, 1.0, 1e10])),
            ("x64_float64_2d", lambda: jnp.linspace(0, 1, 6).reshape(2, 3)),
            ("x64_float32_1d", lambda: jnp.array([0.1, 0.2], dtype=jnp.float32)),
            ("x64_arange_2000", lambda: jnp.arange(2000)),
        ]
    return [
        ("bool_1d", lambda: jnp.array([True, False, True])),
        ("bool_0d", lambda: jnp.array(True)),
        ("int8_1d", lambda: jnp.array([1, -2, 3], dtype=jnp.int8)),
        ("int16_1d", lambda: jnp.array([100, -200], dtype=jnp.int16)),
        ("int32_1d", lambda: jnp.array([1, 2, 3])),
        ("int32_neg", lambda: jnp.array([-1, 20, -300])),
        ("int32_0d", lambda: jnp.array(7)),
        ("int32_0d_strong", lambda: jnp.int32(7)),
        ("int32_0d_weak_asarray", lambda: jnp.asarray(30)),
        ("uint8_1d", lambda: jnp.array([0, 255], dtype=jnp.uint8)),
        ("uint16_1d", lambda: jnp.array([0, 65535], dtype=jnp.uint16)),
        ("uint32_1d", lambda: jnp.array([0, 4000000000], dtype=jnp.uint32)),
        ("bfloat16_1d", lambda: jnp.array([1.0, 2.5, -3.0], dtype=jnp.bfloat16)),
        ("bfloat16_0d", lambda: jnp.array(0.1, dtype=jnp.bfloat16)),
        ("float16_1d", lambda: jnp.array([1.0, 2.5, 0.1], dtype=jnp.float16)),
        ("float16_0d", lambda: jnp.float16(0.1)),
        ("float32_1d", lambda: jnp.array([1.0, 2.0, 3.0])),
        ("float32_1d_frac", lambda: jnp.array([0.1, 0.25, 1 / 3])),
        ("float32_integers_1d", lambda: jnp.arange(4.0)),
        ("float32_0d", lambda: jnp.array(1.5)),
        ("float32_0d_strong", lambda: jnp.float32(1.5)),
        ("float32_0d_weak_asarray", lambda: jnp.asarray(1.5)),
        ("float32_0d_third", lambda: jnp.float32(1 / 3)),
        ("float32_0d_int_valued", lambda: jnp.float32(2)),
        ("float32_0d_neg_zero", lambda: jnp.float32(-0.0)),
        ("float32_2d", lambda: jnp.arange(6.0).reshape(2, 3)),
        ("float32_2d_neg", lambda: jnp.array([[1.0, -2.5], [3.25, -4.0]])),
        ("float32_3d", lambda: jnp.arange(24.0).reshape(2, 3, 4)),
        ("int32_3d", lambda: jnp.arange(24).reshape(2, 3, 4)),
        ("int32_4d", lambda: jnp.arange(16).reshape(2, 2, 2, 2)),
        ("float32_empty", lambda: jnp.zeros((0,))),
        ("float32_empty_2_0", lambda: jnp.zeros((2, 0))),
        ("int32_empty", lambda: jnp.zeros((0,), dtype=jnp.int32)),
        ("float32_empty_0_3", lambda: jnp.ones((0, 3))),
        ("bool_empty", lambda: jnp.zeros((0,), dtype=bool)),
        ("arange_2000", lambda: jnp.arange(2000)),
        ("arange_1001", lambda: jnp.arange(1001)),
        ("arange_1000", lambda: jnp.arange(1000)),
        ("ones_100x100", lambda: jnp.ones((100, 100))),
        ("arange_float_2000", lambda: jnp.arange(2000.0)),
        ("arange_3d_large", lambda: jnp.arange(2400).reshape(4, 20, 30)),
        ("float32_sci_small", lambda: jnp.array([1e-8, 1.0, 2.0])),
        ("float32_sci_large", lambda: jnp.array([1e10, 1.0])),
        ("float32_sci_0d_large", lambda: jnp.float32(1e20)),
        ("float32_sci_0d_small", lambda: jnp.float32(1e-20)),
        ("float32_mixed_magnitude", lambda: jnp.array([1e-3, 1e3, 123456.0])),
        ("float32_nan_inf", lambda: jnp.array([jnp.nan, jnp.inf, -jnp.inf, 1.0])),
        ("float32_0d_nan", lambda: jnp.float32(jnp.nan)),
        ("float32_0d_inf", lambda: jnp.asarray(-jnp.inf)),
        ("float32_all_nan", lambda: jnp.array([jnp.nan, jnp.nan])),
        ("float32_long_row", lambda: jnp.linspace(0, 1, 30)),
        ("int32_long_row", lambda: jnp.arange(40) * 1000),
        ("float32_2d_long_rows", lambda: jnp.linspace(-1, 1, 60).reshape(3, 20)),
        ("complex64_1d", lambda: jnp.array([1 + 2j, 3 - 4.5j])),
        ("complex64_0d", lambda: jnp.complex64(1j)),
        ("complex64_weak", lambda: jnp.asarray(1 + 1j)),
        ("float32_random_like", lambda: jnp.array([0.123456789, 12.5, -7.25e-3])),
        ("int8_weak_add", lambda: jnp.int8(3) + 1),
        ("float16_large", lambda: jnp.array([65504.0, 1e-4], dtype=jnp.float16)),
        ("bool_2d", lambda: jnp.array([[True, False], [False, True]])),
        ("float32_shape_1_1", lambda: jnp.ones((1, 1))),
        ("float32_neg_ones", lambda: -jnp.ones(3)),
        ("uint8_0d", lambda: jnp.uint8(255)),
        ("int32_minmax", lambda: jnp.array([-2 ** 31, 2 ** 31 - 1])),
        ("float32_tiny_denorm", lambda: jnp.array([1e-40, 1.0])),
        ("float32_max", lambda: jnp.array([3.4028235e38])),
    ]


def canonicalization_cases(jnp, np):
    C = []
    for d in PROMOTION_DTYPES:
        dt = jnp.bfloat16 if d == "bfloat16" else np.dtype(d)
        C.append(("asarray_np_" + d, (lambda t: lambda: jnp.asarray(np.zeros(2, dtype=t)))(dt)))
        C.append(("array_np_scalar_" + d, (lambda t: lambda: jnp.array(np.zeros((), dtype=t)[()]))(dt)))
        C.append(("zeros_dtype_" + d, (lambda t: lambda: jnp.zeros(2, dtype=t))(dt)))
    C += [
        ("array_2_40", lambda: jnp.array(2 ** 40)),
        ("array_2_31", lambda: jnp.array(2 ** 31)),
        ("array_2_31_minus_1", lambda: jnp.array(2 ** 31 - 1)),
        ("array_neg_2_31", lambda: jnp.array(-2 ** 31)),
        ("array_neg_2_31_minus_1", lambda: jnp.array(-2 ** 31 - 1)),
        ("array_2_63", lambda: jnp.array(2 ** 63)),
        ("array_2_64", lambda: jnp.array(2 ** 64)),
        ("array_list_2_40", lambda: jnp.array([1, 2 ** 40])),
        ("array_float", lambda: jnp.array(1.0)),
        ("array_float_big", lambda: jnp.array(1e300)),
        ("array_bool", lambda: jnp.array(True)),
        ("array_complex", lambda: jnp.array(1j)),
        ("array_int", lambda: jnp.array(3)),
        ("asarray_int", lambda: jnp.asarray(3)),
        ("asarray_float", lambda: jnp.asarray(3.0)),
        ("asarray_bool", lambda: jnp.asarray(True)),
        ("asarray_complex", lambda: jnp.asarray(3j)),
        ("array_int_list", lambda: jnp.array([1, 2])),
        ("array_mixed_list", lambda: jnp.array([1, 2.0])),
        ("array_bool_int_list", lambda: jnp.array([True, 1])),
        ("array_complex_list", lambda: jnp.array([1, 2j])),
        ("array_empty_list", lambda: jnp.array([])),
        ("array_nested_list", lambda: jnp.array([[1, 2], [3, 4]])),
        ("array_list_np_float32", lambda: jnp.array([np.float32(1), 2.0])),
        ("array_list_jnp_int8", lambda: jnp.array([jnp.int8(1), 2])),
        ("array_int_dtype_float", lambda: jnp.array(3, dtype=jnp.float32)),
        ("array_int_dtype_float64", lambda: jnp.array(3, dtype=jnp.float64)),
        ("array_int_dtype_int64", lambda: jnp.array(3, dtype=jnp.int64)),
        ("array_dtype_float_py", lambda: jnp.array(3, dtype=float)),
        ("array_dtype_int_py", lambda: jnp.array(3.7, dtype=int)),
        ("array_np_float64_scalar", lambda: jnp.array(np.float64(1.0))),
        ("array_np_int64_scalar", lambda: jnp.array(np.int64(1))),
        ("asarray_np_float32_scalar", lambda: jnp.asarray(np.float32(1.0))),
        ("float32_ctor", lambda: jnp.float32(3)),
        ("float64_ctor", lambda: jnp.float64(3)),
        ("int64_ctor", lambda: jnp.int64(3)),
        ("int8_ctor", lambda: jnp.int8(3)),
        ("int8_plus_int", lambda: jnp.int8(3) + 1),
        ("int8_plus_float", lambda: jnp.int8(3) + 1.0),
        ("uint8_plus_int", lambda: jnp.uint8(3) + 1),
        ("uint8_plus_neg_int", lambda: jnp.uint8(3) + (-1)),
        ("float16_plus_float", lambda: jnp.float16(3) * 2.0),
        ("weak_int_plus_weak_float", lambda: jnp.asarray(3) + 1.5),
        ("weak_int_plus_int8", lambda: jnp.asarray(3) + jnp.int8(1)),
        ("weak_int_plus_weak_int", lambda: jnp.asarray(3) + 1),
        ("weak_float_plus_weak_complex", lambda: jnp.asarray(3.0) + 1j),
        ("weak_float_times_bf16", lambda: jnp.asarray(3.0) * jnp.bfloat16(1)),
        ("zeros_default", lambda: jnp.zeros(2)),
        ("ones_int_py", lambda: jnp.ones(2, dtype=int)),
        ("arange_int", lambda: jnp.arange(3)),
        ("arange_float", lambda: jnp.arange(3.0)),
        ("arange_float_step", lambda: jnp.arange(0, 1, 0.5)),
        ("linspace_default", lambda: jnp.linspace(0, 1, 3)),
        ("eye_default", lambda: jnp.eye(2)),
        ("full_int", lambda: jnp.full(2, 3)),
        ("full_float", lambda: jnp.full(2, 3.0)),
        ("full_bool", lambda: jnp.full(2, True)),
        ("zeros_like_weak", lambda: jnp.zeros_like(jnp.asarray(3.0))),
        ("sum_int8", lambda: jnp.sum(jnp.ones(3, dtype=jnp.int8))),
        ("sum_uint8", lambda: jnp.sum(jnp.ones(3, dtype=jnp.uint8))),
        ("sum_bool", lambda: jnp.sum(jnp.ones(3, dtype=bool))),
        ("mean_int", lambda: jnp.mean(jnp.arange(3))),
        ("mean_f16", lambda: jnp.mean(jnp.ones(3, dtype=jnp.float16))),
        ("div_int", lambda: jnp.arange(3) / 2),
        ("sqrt_int", lambda: jnp.sqrt(jnp.arange(3))),
        ("sqrt_int8", lambda: jnp.sqrt(jnp.arange(3, dtype=jnp.int8))),
        ("sqrt_uint16", lambda: jnp.sqrt(jnp.arange(3, dtype=jnp.uint16))),
        ("sqrt_bool", lambda: jnp.sqrt(jnp.ones(3, dtype=bool))),
        ("sqrt_weak_int", lambda: jnp.sqrt(jnp.asarray(4))),
        ("sqrt_py_int", lambda: jnp.sqrt(4)),
        ("exp_py_float", lambda: jnp.exp(1.0)),
        ("add_py_scalars", lambda: jnp.add(1, 2)),
        ("add_py_int_float", lambda: jnp.add(1, 2.0)),
        ("neg_weak", lambda: -jnp.asarray(3)),
        ("astype_weak", lambda: jnp.asarray(3).astype(jnp.float32)),
        ("reshape_weak", lambda: jnp.asarray(3.0).reshape(1)),
        ("index_weak", lambda: jnp.array([1.0, 2.0])[0]),
        ("dtype_float_", lambda: jnp.float_),
        ("dtype_int_", lambda: jnp.int_),
        ("dtype_complex_", lambda: jnp.complex_),
        ("dtype_of_float", lambda: jnp.dtype(float)),
        ("dtype_of_int", lambda: jnp.dtype(int)),
        ("dtype_of_complex", lambda: jnp.dtype(complex)),
        ("dtypes_canonicalize_float64", lambda: jnp.zeros(1, dtype=np.float64).dtype),
        ("finfo_float32_eps", lambda: jnp.finfo(jnp.float32).eps),
        ("iinfo_int32_max", lambda: jnp.iinfo(jnp.int32).max),
    ]
    return C


def error_cases(jax, jnp, lax, np, x64=False):
    if x64:
        return [
            ("x64_array_2_64", lambda: jnp.array(2 ** 64)),
            ("x64_array_2_63", lambda: jnp.array(2 ** 63)),
            ("x64_array_neg_2_63_minus_1", lambda: jnp.array(-2 ** 63 - 1)),
            ("x64_reshape_bad", lambda: jnp.arange(6).reshape(4, 2)),
        ]

    def setitem():
        x = jnp.ones(3)
        x[2] = 1

    def jit_static_unhashable():
        f = jax.jit(lambda n, x: x * len(n), static_argnums=0)
        return f([1, 2], jnp.ones(3))

    def jit_returns_string():
        return jax.jit(lambda x: "hello")(jnp.ones(3))

    def jit_bool_conversion():
        @jax.jit
        def f(x):
            if x > 0:
                return x
            return -x
        return f(jnp.float32(1))

    def jit_int_conversion():
        @jax.jit
        def f(x):
            return jnp.ones(int(x))
        return f(jnp.int32(3))

    def jit_range():
        @jax.jit
        def f(x):
            s = 0
            for i in range(x):
                s = s + i
            return s
        return f(jnp.int32(3))

    def jit_np_asarray():
        @jax.jit
        def f(x):
            return np.asarray(x)
        return f(jnp.ones(3))

    def jit_bool_index():
        @jax.jit
        def f(x):
            return x[x > 0]
        return f(jnp.ones(3))

    def jit_float_conversion():
        @jax.jit
        def f(x):
            return float(x)
        return f(jnp.float32(1))

    def jit_shape_from_tracer():
        @jax.jit
        def f(n):
            return jnp.zeros(n)
        return f(3)

    def jit_arange_tracer():
        @jax.jit
        def f(n):
            return jnp.arange(n)
        return f(3)

    def leaked_tracer():
        store = []

        @jax.jit
        def f(x):
            store.append(x)
            return x
        f(jnp.ones(3))
        return jnp.sin(store[0])

    def leaked_tracer_make_jaxpr():
        store = []

        def f(x):
            store.append(x)
            return x
        jax.make_jaxpr(f)(jnp.ones(3))
        return store[0] + 1

    def dynamic_slice_size_tracer():
        @jax.jit
        def f(x, n):
            return x[:n]
        return f(jnp.ones(3), 2)

    def jit_static_changes():
        f = jax.jit(lambda x, n: x * n, static_argnums=1)
        return f(jnp.ones(3), 2.0)

    def jit_kwargs_array_static():
        f = jax.jit(lambda x, n: x * n, static_argnums=1)
        return f(jnp.ones(3), jnp.ones(3))

    def nonhashable_static_argnames():
        f = jax.jit(lambda x, opts: x, static_argnames="opts")
        return f(jnp.ones(3), opts={"a": 1})

    def make_jaxpr_returns_string():
        return jax.make_jaxpr(lambda x: "s")(np.ones(3, np.float32))

    return [
        ("reshape_incompatible", lambda: jnp.arange(6).reshape(4, 2)),
        ("reshape_incompatible_minus1", lambda: jnp.arange(7).reshape(2, -1)),
        ("reshape_two_minus1", lambda: jnp.arange(6).reshape(-1, -1)),
        ("reshape_negative_other", lambda: jnp.arange(6).reshape(-2, 3)),
        ("broadcast_to_incompatible", lambda: jnp.broadcast_to(jnp.ones(3), (2, 4))),
        ("broadcast_to_fewer_dims", lambda: jnp.broadcast_to(jnp.ones((2, 3)), (3,))),
        ("add_shape_mismatch", lambda: jnp.ones(3) + jnp.ones(4)),
        ("add_shape_mismatch_2d", lambda: jnp.ones((2, 3)) + jnp.ones((3, 2))),
        ("lax_add_shapes", lambda: lax.add(jnp.ones(3), jnp.ones(4))),
        ("lax_add_dtypes", lambda: lax.add(jnp.ones(3), jnp.ones(3, dtype=jnp.int32))),
        ("lax_add_dtypes_f16", lambda: lax.add(jnp.ones(3, jnp.float16), jnp.ones(3))),
        ("lax_add_rank", lambda: lax.add(jnp.ones(3), jnp.ones((1, 3)))),
        ("lax_add_weak_int_to_float", lambda: lax.add(jnp.ones(3), 1)),
        ("lax_dot_general_mismatch",
         lambda: lax.dot_general(jnp.ones((2, 3)), jnp.ones((4, 2)), (((1,), (0,)), ((), ())))),
        ("lax_reshape_bad", lambda: lax.reshape(jnp.ones(6), (4,))),
        ("lax_slice_oob", lambda: lax.slice(jnp.ones(3), (0,), (5,))),
        ("lax_broadcast_in_dim_bad", lambda: lax.broadcast_in_dim(jnp.ones(3), (2, 4), (1,))),
        ("lax_concatenate_dtypes", lambda: lax.concatenate([jnp.ones(3), jnp.ones(3, jnp.int32)], 0)),
        ("lax_transpose_bad", lambda: lax.transpose(jnp.ones((2, 3)), (0, 0))),
        ("lax_select_n_bad_pred", lambda: lax.select_n(jnp.ones(3), jnp.ones(3), jnp.ones(3))),
        ("concatenate_rank_mismatch", lambda: jnp.concatenate([jnp.ones(3), jnp.ones((2, 3))])),
        ("concatenate_shape_mismatch", lambda: jnp.concatenate([jnp.ones((2, 3)), jnp.ones((2, 4))])),
        ("concatenate_empty", lambda: jnp.concatenate([])),
        ("concatenate_0d", lambda: jnp.concatenate([jnp.float32(1), jnp.float32(2)])),
        ("stack_shape_mismatch", lambda: jnp.stack([jnp.ones(3), jnp.ones(4)])),
        ("index_oob_clamps", lambda: jnp.arange(3)[5]),
        ("index_oob_neg_clamps", lambda: jnp.arange(3)[-5]),
        ("index_too_many", lambda: jnp.arange(3)[0, 0]),
        ("index_float", lambda: jnp.arange(3)[1.0]),
        ("index_array_oob", lambda: jnp.arange(3)[jnp.array([0, 7])]),
        ("at_set_oob_dropped", lambda: jnp.arange(3).at[5].set(9)),
        ("at_get_oob_fill", lambda: jnp.arange(3.0).at[5].get(mode="fill", fill_value=-1)),
        ("array_2_40", lambda: jnp.array(2 ** 40)),
        ("array_2_64", lambda: jnp.array(2 ** 64)),
        ("array_2_31", lambda: jnp.array(2 ** 31)),
        ("add_2_40", lambda: jnp.ones(3) + 2 ** 40),
        ("int32_add_2_40", lambda: jnp.arange(3) + 2 ** 40),
        ("int8_add_300", lambda: jnp.int8(3) + 300),
        ("uint8_ctor_300", lambda: jnp.uint8(300)),
        ("setitem", setitem),
        ("jit_static_unhashable_list", jit_static_unhashable),
        ("jit_static_argnames_unhashable_dict", nonhashable_static_argnames),
        ("jit_static_array", jit_kwargs_array_static),
        ("jit_static_float_ok", jit_static_changes),
        ("jit_returns_string", jit_returns_string),
        ("make_jaxpr_returns_string", make_jaxpr_returns_string),
        ("sum_axis_out_of_range", lambda: jnp.sum(jnp.ones((2, 3)), axis=3)),
        ("sum_axis_neg_out_of_range", lambda: jnp.sum(jnp.ones((2, 3)), axis=-3)),
        ("sum_axis_duplicate", lambda: jnp.sum(jnp.ones((2, 3)), axis=(0, 0))),
        ("transpose_repeated_axes", lambda: jnp.transpose(jnp.ones((2, 3)), (0, 0))),
        ("transpose_wrong_len", lambda: jnp.transpose(jnp.ones((2, 3)), (0,))),
        ("squeeze_non_one", lambda: jnp.squeeze(jnp.ones((2, 3)), axis=0)),
        ("expand_dims_oob", lambda: jnp.expand_dims(jnp.ones(3), 3)),
        ("swapaxes_oob", lambda: jnp.swapaxes(jnp.ones((2, 3)), 0, 2)),
        ("dot_mismatch", lambda: jnp.dot(jnp.ones(3), jnp.ones(4))),
        ("dot_mismatch_2d", lambda: jnp.dot(jnp.ones((2, 3)), jnp.ones((2, 3)))),
        ("matmul_mismatch", lambda: jnp.ones((2, 3)) @ jnp.ones((4, 5))),
        ("matmul_scalar", lambda: jnp.matmul(jnp.float32(1), jnp.ones(3))),
        ("hash_array", lambda: hash(jnp.ones(3))),
        ("hash_scalar_array", lambda: hash(jnp.float32(1))),
        ("bool_array", lambda: bool(jnp.ones(3))),
        ("bool_scalar_array", lambda: bool(jnp.ones(1))),
        ("bool_empty_array", lambda: bool(jnp.ones(0))),
        ("int_array", lambda: int(jnp.ones(3))),
        ("int_size1_array", lambda: int(jnp.array([2.7]))),
        ("float_array", lambda: float(jnp.ones(2))),
        ("index_op_float_array", lambda: [1, 2, 3][jnp.float32(1)]),
        ("index_op_int_array", lambda: [1, 2, 3][jnp.int32(1)]),
        ("len_0d", lambda: len(jnp.float32(1))),
        ("iter_0d", lambda: list(jnp.float32(1))),
        ("zeros_negative_dim", lambda: jnp.zeros((2, -1))),
        ("zeros_float_dim", lambda: jnp.zeros((2.0, 3))),
        ("ones_bad_dtype", lambda: jnp.ones(3, dtype="foo")),
        ("arange_no_args", lambda: jnp.arange()),
        ("asarray_string", lambda: jnp.asarray("abc")),
        ("asarray_object", lambda: jnp.asarray([object()])),
        ("asarray_ragged", lambda: jnp.array([[1, 2], [3]])),
        ("astype_string", lambda: jnp.ones(3).astype(str)),
        ("tracer_bool_conversion", jit_bool_conversion),
        ("tracer_integer_conversion_int", jit_int_conversion),
        ("tracer_integer_conversion_range", jit_range),
        ("tracer_float_conversion", jit_float_conversion),
        ("tracer_array_conversion", jit_np_asarray),
        ("tracer_nonconcrete_boolean_index", jit_bool_index),
        ("tracer_shape_from_tracer", jit_shape_from_tracer),
        ("tracer_arange_from_tracer", jit_arange_tracer),
        ("tracer_slice_with_tracer", dynamic_slice_size_tracer),
        ("unexpected_tracer_jit", leaked_tracer),
        ("unexpected_tracer_make_jaxpr", leaked_tracer_make_jaxpr),
        # outputs of transformed functions that are no JAX values
        ("grad_tuple_output", lambda: jax.grad(lambda x: (x.sum(), 1))(jnp.ones(3))),
        ("value_and_grad_string_output", lambda: jax.value_and_grad(lambda x: "s")(1.0)),
        ("vjp_string_output", lambda: jax.vjp(lambda x: "s", 1.0)),
        ("jvp_string_output", lambda: jax.jvp(lambda x: "s", (1.0,), (1.0,))),
        ("vmap_string_output", lambda: jax.vmap(lambda x: "s")(jnp.ones(2))),
    ]
