"""Record JAX 0.10.2's jaxprs, eager values and errors of the smaller jax.scipy submodules
(signal, ndimage, integrate, interpolate, cluster, fft, sparse.linalg, spatial.transform) into
tests/data/scipy_misc.json (read by tests/test_scipy_misc.py).

    /work/oracle/bin/python tests/oracle/record_scipy_misc.py

`cases(jax, jnp, lax, np)` builds (name, fn, args[, traced]); the pyjax test imports it too,
so both sides run the very same functions.  Each case is recorded with x64 off and on: the
jaxpr text (or JAX's error; not for cases with traced=False) and the eager value (or error).
"""
import importlib
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "scipy_misc.json")


def modules(jax):
    """The jax.scipy submodules under test, of `jax` (JAX or pyjax), by short name."""
    names = ["signal", "ndimage", "integrate", "interpolate", "cluster.vq", "fft",
             "sparse.linalg", "spatial.transform"]
    return {n.split(".")[-1]: importlib.import_module(f"{jax.__name__}.scipy.{n}")
            for n in names}


def _signal_cases(add, jax, jnp, np, m):
    sig = m["signal"]
    rng = np.random.default_rng(5)
    f32 = np.float32
    a = rng.standard_normal((5, 6)).astype(f32)
    b = rng.standard_normal((3, 2)).astype(f32)
    c = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
    x1 = rng.standard_normal(9).astype(f32)
    k1 = np.array([1.0, -2.0, 0.5], f32)
    for mode in ("full", "same", "valid"):
        add(f"convolve_{mode}", lambda p, q, m_=mode: sig.convolve(p, q, m_), a, b)
        add(f"convolve_swapped_{mode}", lambda p, q, m_=mode: sig.convolve(p, q, m_), b, a)
        add(f"correlate_{mode}", lambda p, q, m_=mode: sig.correlate(p, q, m_), a, b)
        add(f"correlate2d_{mode}", lambda p, q, m_=mode: sig.correlate2d(p, q, m_), a, b)
        add(f"correlate2d_swapped_{mode}", lambda p, q, m_=mode: sig.correlate2d(p, q, m_), b, a)
        add(f"fftconvolve_{mode}", lambda p, q, m_=mode: sig.fftconvolve(p, q, m_), a, b)
    add("convolve_1d", lambda p, q: sig.convolve(p, q), x1, k1)
    add("convolve_int", lambda p, q: sig.convolve(p, q, "same"),
        np.arange(6, dtype=np.int32), np.array([1, 2, 1], np.int32))
    add("convolve_method_fft", lambda p, q: sig.convolve(p, q, "same", method="fft"), a, b)
    add("convolve_precision", lambda p, q: sig.convolve(
        p, q, precision=jax.lax.Precision.HIGHEST), x1, k1)
    add("correlate_complex", lambda p, q: sig.correlate(p, q), c, c[:2, :3])
    add("correlate2d_complex_same_shape", lambda p, q: sig.correlate2d(p, q, "valid"), c, c)
    add("convolve2d", lambda p, q: sig.convolve2d(p, q, "same"), a, b)
    add("fftconvolve_axes", lambda p, q: sig.fftconvolve(p, q, axes=1), a, a[:, :3])
    add("fftconvolve_complex", lambda p, q: sig.fftconvolve(p, q, "same"), c, a[:2, :2])
    add("fftconvolve_size1", lambda p, q: sig.fftconvolve(p, q), a[:1], a[:, :1])
    add("err_convolve_mode", lambda p, q: sig.convolve(p, q, "bad"), a, b)
    add("err_convolve_ndim", lambda p, q: sig.convolve(p, q), a, k1)
    add("err_convolve_empty", lambda p, q: sig.convolve(p, q), a, np.zeros((0, 1), f32))
    add("err_convolve_shapes", lambda p, q: sig.convolve(p, q), a, np.ones((7, 2), f32))
    add("err_convolve_method", lambda p, q: sig.convolve(p, q, method="x"), a, b)
    add("err_convolve2d_boundary", lambda p, q: sig.convolve2d(p, q, boundary="wrap"), a, b)
    add("err_correlate2d_1d", lambda p, q: sig.correlate2d(p, q), x1, k1)
    add("err_fftconvolve_valid", lambda p, q: sig.fftconvolve(p, q, "valid"), a,
        np.ones((7, 2), f32))
    add("err_fftconvolve_axes", lambda p, q: sig.fftconvolve(p, q, axes=0), a, b)
    add("err_fftconvolve_ndim", lambda p, q: sig.fftconvolve(p, q), a, k1)
    # -- detrend ---------------------------------------------------------------------------
    t = rng.standard_normal((3, 20)).astype(f32) + np.arange(20, dtype=f32)
    add("detrend_linear", lambda d: sig.detrend(d), t)
    add("detrend_constant_axis0", lambda d: sig.detrend(d, axis=0, type="constant"), t)
    add("detrend_breakpoints", lambda d: sig.detrend(d, bp=[5, 12]), t)
    add("detrend_int", lambda d: sig.detrend(d, type="constant"), np.arange(7, dtype=np.int32))
    add("err_detrend_type", lambda d: sig.detrend(d, type="quadratic"), t)
    add("err_detrend_bp", lambda d: sig.detrend(d, bp=30), t)
    # -- stft / istft / csd / welch ----------------------------------------------------------
    s = rng.standard_normal((2, 40)).astype(f32)
    s2 = rng.standard_normal((2, 40)).astype(f32)
    sc = (s + 1j * s2).astype(np.complex64)
    add("stft", lambda d: sig.stft(d, nperseg=16), s)
    add("stft_options", lambda d: sig.stft(d, nperseg=10, noverlap=3, nfft=12, axis=0,
                                           boundary="even", detrend="linear"), s.T)
    add("stft_odd_twosided", lambda d: sig.stft(d, nperseg=8, boundary="odd", padded=False,
                                                return_onesided=False, window="hamming"), s)
    add("stft_constant_boundary_fs", lambda d: sig.stft(d, fs=4.0, nperseg=7,
                                                        boundary="constant"), s[0])
    add("stft_window_array", lambda d: sig.stft(d, nperseg=8, boundary=None,
                                                window=np.hanning(8).astype(f32)), s)
    add("stft_complex", lambda d: sig.stft(d, nperseg=8), sc)
    add("welch", lambda d: sig.welch(d, nperseg=16), s)
    add("welch_spectrum_median", lambda d: sig.welch(
        d, fs=10.0, nperseg=16, scaling="spectrum", average="median", detrend=False), s)
    add("welch_twosided_nfft", lambda d: sig.welch(d, nperseg=9, nfft=10,
                                                   return_onesided=False), s)
    add("welch_int", lambda d: sig.welch(d, nperseg=8), np.arange(24, dtype=np.int32) % 5)
    add("welch_axis0_callable_detrend", lambda d: sig.welch(
        d, nperseg=16, axis=0, detrend=lambda v: v - v.mean(-1, keepdims=True)), s.T)
    add("welch_one_segment", lambda d: sig.welch(d), s)
    add("csd", lambda p, q: sig.csd(p, q, nperseg=16), s, s2)
    add("csd_unequal_median", lambda p, q: sig.csd(p, q, nperseg=16, average="median"),
        s, s2[:, :30])
    add("csd_broadcast", lambda p, q: sig.csd(p, q, nperseg=8, detrend="linear"), s, s2[:1])
    f, tt, Z = (np.asarray(v) for v in sig.stft(s, nperseg=16))
    add("istft", lambda z: sig.istft(z), Z)
    add("istft_hamming_no_boundary", lambda z: sig.istft(z, nperseg=16, window="hamming",
                                                        boundary=False), Z)
    add("istft_time_axis0", lambda z: sig.istft(z, time_axis=0, freq_axis=-1),
        np.moveaxis(Z[0], -1, 0))
    add("istft_twosided_fs", lambda z: sig.istft(z, fs=2.0, input_onesided=False),
        np.asarray(sig.stft(sc, nperseg=8)[2]))
    add("err_stft_nperseg", lambda d: sig.stft(d, nperseg=0), s)
    add("err_stft_noverlap", lambda d: sig.stft(d, nperseg=8, noverlap=8), s)
    add("err_stft_nfft", lambda d: sig.stft(d, nperseg=8, nfft=4), s)
    add("err_stft_boundary", lambda d: sig.stft(d, boundary="x"), s)
    add("err_welch_scaling", lambda d: sig.welch(d, scaling="x"), s)
    add("err_welch_average", lambda d: sig.welch(d, nperseg=8, average="x"), s)
    add("err_welch_window_2d", lambda d: sig.welch(d, window=np.ones((2, 2), f32)), s)
    add("err_welch_window_long", lambda d: sig.welch(d, window=np.ones(60, f32)), s)
    add("err_welch_detrend", lambda d: sig.welch(d, detrend=1), s)
    add("err_csd_rank", lambda p, q: sig.csd(p, q), s, s2[0])
    add("err_istft_1d", lambda z: sig.istft(z), Z[0, 0])
    add("err_istft_axes", lambda z: sig.istft(z, time_axis=0, freq_axis=0), Z)
    add("err_istft_nfft", lambda z: sig.istft(z, nfft=3), Z)
    add("err_istft_window", lambda z: sig.istft(z, window=np.ones(3, f32)), Z)
    # JAX's istft inverts with the caller's nfft (None), not the odd default it derived
    add("err_istft_odd_nperseg", lambda z: sig.istft(z, nperseg=7),
        np.asarray(sig.stft(s, nperseg=7)[2]))
    add("grad_convolve", jax.grad(lambda p, q: (sig.convolve(p, q, "same") ** 2).sum(),
                                  (0, 1)), a, b)
    add("grad_fftconvolve", jax.grad(lambda p: sig.fftconvolve(p, b, "valid").sum()), a)
    add("grad_welch", jax.grad(lambda d: sig.welch(d, nperseg=8)[1].sum()), s[0, :16])
    add("vmap_convolve", jax.vmap(lambda p: sig.convolve(p, k1, "same")), a)


def _small_module_cases(add, jax, jnp, np, m):
    rng = np.random.default_rng(6)
    f32 = np.float32
    nd = m["ndimage"].map_coordinates
    img = rng.standard_normal((4, 5)).astype(f32)
    coords = [np.array([0.3, -1.2, 3.7, 2.0, 5.6], f32), np.array([1.6, 2.2, 4.6, -0.4, 9.1], f32)]
    for mode in ("constant", "nearest", "wrap", "mirror", "reflect"):
        for order in (0, 1):
            add(f"map_coordinates_{mode}_{order}",
                lambda i, p, q, o=order, m_=mode: nd(i, [p, q], o, mode=m_, cval=-2.0),
                img, *coords)
    add("map_coordinates_int", lambda i, p, q: nd(i, [p, q], 1),
        np.arange(20, dtype=np.int32).reshape(4, 5), *coords)
    add("map_coordinates_int_coords", lambda i, p: nd(i, [p], 0, mode="wrap"),
        img[0], np.array([0, 3, 7, -2], np.int32))
    add("err_map_coordinates_order", lambda i, p, q: nd(i, [p, q], 2), img, *coords)
    add("err_map_coordinates_mode", lambda i, p, q: nd(i, [p, q], 1, mode="grid-wrap"),
        img, *coords)
    add("err_map_coordinates_len", lambda i, p: nd(i, [p], 1), img, coords[0])
    add("grad_map_coordinates", jax.grad(lambda i, p, q: nd(i, [p, q], 1).sum(), (0, 1)),
        img, *coords)
    trap = m["integrate"].trapezoid
    y = rng.standard_normal((3, 6)).astype(f32)
    add("trapezoid", lambda v: trap(v), y)
    add("trapezoid_x_axis0", lambda v, x: trap(v, x, axis=0), y, np.array([0., 0.5, 2.], f32))
    add("trapezoid_dx", lambda v: trap(v, dx=0.25), y)
    RGI = m["interpolate"].RegularGridInterpolator
    gx = np.linspace(0, 1, 4).astype(f32)
    gy = np.array([0., .5, 2., 3., 4.5], f32)
    vals = (gx[:, None] ** 2 + np.sin(gy)[None]).astype(f32)
    q = np.array([[0.1, 0.2], [0.9, 4.0], [-0.1, 1.0], [0.5, 5.0], [0.35, 2.8]], f32)
    add("rgi_linear", lambda v, p: RGI((gx, gy), v)(p), vals, q)
    add("rgi_nearest", lambda v, p: RGI((gx, gy), v, method="nearest")(p), vals, q)
    add("rgi_extrapolate", lambda v, p: RGI((gx, gy), v, fill_value=None)(p), vals, q)
    add("rgi_fill_value", lambda v, p: RGI((gx, gy), v, fill_value=-1.0)(p, method="nearest"),
        vals, q)
    add("rgi_trailing_dims", lambda v, p: RGI((gx,), v)(p), vals, np.array([0.3, 0.7], f32))
    add("rgi_tuple_points", lambda v, p: RGI((gx, gy), v)((p, np.float32(1.5))), vals, q[:, 0])
    add("rgi_jit_pytree", lambda v, p: jax.jit(lambda f, z: f(z))(RGI((gx, gy), v), p), vals, q)
    add("err_rgi_method", lambda v, p: RGI((gx, gy), v, method="cubic")(p), vals, q)
    add("err_rgi_dims", lambda v, p: RGI((gx, gy), v)(p), vals, np.ones((2, 3), f32))
    add("grad_rgi", jax.grad(lambda v, p: RGI((gx, gy), v)(p).sum(), (0, 1)), vals, q[[0, 4]])
    vq = m["vq"].vq
    obs = rng.standard_normal((6, 3)).astype(f32)
    book = rng.standard_normal((4, 3)).astype(f32)
    add("vq", lambda o, c: vq(o, c), obs, book)
    add("vq_1d", lambda o, c: vq(o, c), obs[:, 0], book[:, 0])
    add("vq_int", lambda o, c: vq(o, c), np.array([[0, 1], [5, 5], [9, 2]], np.int32),
        np.array([[1, 1], [8, 3]], np.int32))
    add("err_vq_rank", lambda o, c: vq(o, c), obs, book[0])
    add("err_vq_3d", lambda o, c: vq(o, c), obs[None], book[None])


def _fft_cases(add, jax, jnp, np, m):
    fft = m["fft"]
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    c = (x[0] + 1j * x[1]).astype(np.complex64)
    for norm in (None, "ortho"):
        tag = "ortho" if norm else "backward"
        add(f"dct_{tag}", lambda v, n_=norm: fft.dct(v, norm=n_), x)
        add(f"dct_n_axis_{tag}", lambda v, n_=norm: fft.dct(v, n=7, axis=0, norm=n_), x)
        add(f"idct_{tag}", lambda v, n_=norm: fft.idct(v, norm=n_), x)
        add(f"idct_n_{tag}", lambda v, n_=norm: fft.idct(v, n=3, axis=1, norm=n_), x)
        add(f"dctn_{tag}", lambda v, n_=norm: fft.dctn(v, norm=n_), x)
        add(f"dctn_s_{tag}", lambda v, n_=norm: fft.dctn(v, s=(3, 6), norm=n_), x)
        add(f"idctn_{tag}", lambda v, n_=norm: fft.idctn(v, norm=n_), x)
        add(f"idctn_axes_{tag}", lambda v, n_=norm: fft.idctn(v, axes=(2, 0), norm=n_), x)
    add("dctn_one_axis", lambda v: fft.dctn(v, axes=[1]), x)
    add("idctn_s_int", lambda v: fft.idctn(v, s=4), x)
    add("dct_backward_name", lambda v: fft.dct(v, norm="backward"), x[0, 0])
    add("dct_complex", lambda v: fft.dct(v), c)
    add("idctn_complex", lambda v: fft.idctn(v, norm="ortho"), c)
    add("dct_int", lambda v: fft.dct(v), np.arange(6, dtype=np.int32))
    add("err_dct_type", lambda v: fft.dct(v, type=3), x)
    add("err_dct_norm", lambda v: fft.dct(v, norm="forward"), x)
    add("err_dctn_s", lambda v: fft.dctn(v, s=(1, 2, 3, 4)), x)
    add("err_idctn_axes", lambda v: fft.idctn(v, axes=(0, 0)), x)
    add("grad_dctn", jax.grad(lambda v: (fft.dctn(v, norm="ortho") ** 2).sum()), x[0])
    add("grad_idct", jax.grad(lambda v: fft.idct(v).sum()), x[0, 0])
    add("vmap_dct", jax.vmap(lambda v: fft.dct(v, norm="ortho")), x[0])


def _sparse_cases(add, jax, jnp, np, m):
    la = m["linalg"]
    rng = np.random.default_rng(8)
    n = 6
    Q = rng.standard_normal((n, n))
    A = (Q @ Q.T + n * np.eye(n)).astype(np.float32)
    G = (Q + n * np.eye(n)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = (b + 1j * b[::-1]).astype(np.complex64)
    Minv = np.diag(1 / np.diag(A)).astype(np.float32)

    def tree_matvec(t):
        y = jnp.concatenate([t["a"], t["b"]]) @ A
        return {"a": y[:2], "b": y[2:]}

    add("cg", lambda a, v: la.cg(a, v)[0], A, b)
    add("cg_function_tol", lambda a, v: la.cg(lambda x: a @ x, v, tol=1e-3)[0], A, b, False)
    add("cg_preconditioned", lambda a, v: la.cg(a, v, M=Minv, maxiter=3)[0], A, b, False)
    add("cg_pytree", lambda v: la.cg(tree_matvec, {"a": v[:2], "b": v[2:]})[0], b, False)
    add("cg_complex", lambda a, v: la.cg(a.astype(np.complex64), v)[0], A, c, False)
    add("bicgstab", lambda a, v: la.bicgstab(a, v)[0], G, b)
    add("bicgstab_x0_atol", lambda a, v: la.bicgstab(a, v, x0=v, atol=1e-2)[0], G, b, False)
    add("gmres", lambda a, v: la.gmres(a, v), G, b, False)
    add("gmres_incremental", lambda a, v: la.gmres(a, v, restart=2, solve_method="incremental"),
        G, b)
    add("gmres_short_restart", lambda a, v: la.gmres(a, v, restart=2, maxiter=2), G, b, False)
    add("gmres_pytree", lambda v: la.gmres(tree_matvec, {"a": v[:2], "b": v[2:]})[0], b, False)
    add("gmres_complex", lambda a, v: la.gmres(a, v)[0], G, c, False)
    add("err_cg_shape", lambda v: la.cg(np.ones((2, 3), np.float32), v), b)
    add("err_cg_operator", lambda v: la.cg("A", v), b)
    add("err_cg_x0_shape", lambda a, v: la.cg(a, v, x0=v[:3]), A, b)
    add("err_bicgstab_x0_tree", lambda a, v: la.bicgstab(a, v, x0=(v,)), G, b)
    add("err_gmres_method", lambda a, v: la.gmres(a, v, solve_method="x"), G, b)
    add("grad_cg", jax.grad(lambda v: la.cg(A, v)[0].sum()), b, False)
    add("grad_gmres", jax.grad(lambda v: la.gmres(G, v)[0].sum()), b, False)
    add("vmap_cg", jax.vmap(lambda v: la.cg(A, v)[0]), np.stack([b, 2 * b - 1]), False)


def _spatial_cases(add, jax, jnp, np, m):
    tr = m["transform"]
    R, Slerp = tr.Rotation, tr.Slerp
    rng = np.random.default_rng(9)
    f32 = np.float32
    q = rng.standard_normal((4, 4)).astype(f32)
    ang = rng.standard_normal((4, 3)).astype(f32)
    vec = rng.standard_normal((4, 3)).astype(f32)
    add("rotation_as_matrix", lambda p: R.from_quat(p).as_matrix(), q)
    add("rotation_as_mrp", lambda p: R.from_quat(p).as_mrp(), q)
    add("rotation_as_rotvec", lambda p: R.from_quat(p).as_rotvec(), q)
    add("rotation_as_rotvec_degrees", lambda p: R.from_quat(p).as_rotvec(degrees=True), q)
    add("rotation_as_quat", lambda p: R.from_quat(p).as_quat(canonical=True, scalar_first=True), q)
    add("rotation_magnitude", lambda p: R.from_quat(p).magnitude(), q)
    for seq in ("xyz", "ZXZ", "zyx", "XYX"):  # jaxprs of one sequence (the others alike)
        traced = () if seq == "xyz" else (False,)
        add(f"rotation_as_euler_{seq}", lambda p, s_=seq: R.from_quat(p).as_euler(s_), q,
            *traced)
        add(f"rotation_from_euler_{seq}", lambda a, s_=seq: R.from_euler(s_, a).as_quat(), ang,
            *traced)
    add("rotation_as_euler_degrees", lambda p: R.from_quat(p[0]).as_euler("yzx", degrees=True), q)
    add("rotation_from_euler_short", lambda a: R.from_euler("YX", a[:, :2], degrees=True).quat, ang)
    add("rotation_from_euler_scalar", lambda a: R.from_euler("z", a[0, 0]).quat, ang)
    add("rotation_from_matrix", lambda p: R.from_matrix(R.from_quat(p).as_matrix()).quat, q)
    add("rotation_from_mrp", lambda v: R.from_mrp(v).quat, vec)
    add("rotation_from_rotvec", lambda v: R.from_rotvec(v).quat, vec)
    add("rotation_from_rotvec_small", lambda v: R.from_rotvec(v * 1e-4, degrees=True).quat, vec)
    add("rotation_apply", lambda p, v: R.from_quat(p).apply(v), q, vec)
    add("rotation_apply_inverse_single", lambda p, v: R.from_quat(p[0]).apply(v, inverse=True),
        q, vec)
    add("rotation_mul_inv", lambda p: (R.from_quat(p)[1:3] * R.from_quat(p)[:2].inv()).quat, q)
    add("rotation_mean", lambda p: R.from_quat(p).mean().as_quat(canonical=True), q, False)
    add("rotation_mean_weights", lambda p, w: R.from_quat(p).mean(w).as_quat(canonical=True),
        q, np.array([1.0, 2.0, 0.5, 3.0], f32), False)
    add("rotation_identity_concatenate", lambda p: R.concatenate(
        [R.from_quat(p), R(R.identity(dtype=jnp.float32).quat[None])]).quat, q)
    times = np.array([0.0, 1.0, 3.0, 4.0], f32)
    add("slerp", lambda p, t: Slerp.init(times, R.from_quat(p))(t).as_quat(), q,
        np.array([0.0, 0.5, 2.0, 3.9, 4.0], f32))
    add("slerp_scalar_time", lambda p: Slerp.init(times, R.from_quat(p))(2.5).as_quat(), q)
    add("rotation_jit_pytree", lambda p, v: jax.jit(lambda r, w: r.apply(w))(R.from_quat(p), v),
        q, vec)
    add("rotation_vmap", jax.vmap(lambda p: R.from_quat(p).as_rotvec()), q)
    add("grad_rotation_rotvec", jax.grad(lambda p: R.from_quat(p).as_rotvec().sum()), q[0])
    add("err_from_euler_long", lambda a: R.from_euler("xyzx", a), ang)
    add("err_from_euler_mixed", lambda a: R.from_euler("xY", a), ang)
    add("err_from_euler_repeat", lambda a: R.from_euler("xx", a), ang)
    add("err_as_euler_two", lambda p: R.from_quat(p).as_euler("xy"), q)
    add("err_single_index", lambda p: R.from_quat(p[0])[0], q)
    add("err_single_len", lambda p: len(R.from_quat(p[0])), q)
    add("err_rotation_random", lambda p: R.random(p), q)
    add("err_mean_weights", lambda p: R.from_quat(p).mean(np.ones(3, f32)), q)
    add("err_slerp_rotations", lambda p: Slerp.init(times, p), q)
    add("err_slerp_single", lambda p: Slerp.init(times[:1], R.from_quat(p[0])), q)
    add("err_slerp_times", lambda p: Slerp.init(times[:3], R.from_quat(p)), q)
    add("err_slerp_call_2d", lambda p: Slerp.init(times, R.from_quat(p))(np.zeros((2, 2), f32)), q)


def cases(jax, jnp, lax, np):
    """(name, fn, args, traced): fn is what make_jaxpr traces (when traced) and what is
    called eagerly."""
    m = modules(jax)
    C = []

    def add(name, fn, *args):
        assert name not in {c[0] for c in C}, name
        traced = True
        if args and args[-1] is False:
            args, traced = args[:-1], False
        C.append((name, fn, args, traced))

    _signal_cases(add, jax, jnp, np, m)
    _small_module_cases(add, jax, jnp, np, m)
    _fft_cases(add, jax, jnp, np, m)
    _sparse_cases(add, jax, jnp, np, m)
    _spatial_cases(add, jax, jnp, np, m)
    return C


def value_of(out, np, jax=None):
    """An eager result as JSON: nested (dtype, shape, weak type, values) records."""
    if isinstance(out, dict):
        return [value_of(out[k], np) for k in sorted(out)]
    if isinstance(out, (tuple, list)):
        return [value_of(o, np) for o in out]
    if out is None:
        return None
    arr = np.asarray(out)
    if arr.dtype.kind == "c":
        values = np.stack([arr.real, arr.imag], -1).astype(np.float64).tolist()
    elif arr.dtype.kind == "f":
        values = arr.astype(np.float64).tolist()
    else:
        values = arr.tolist()
    return {"dtype": str(arr.dtype), "shape": list(arr.shape), "values": values,
            "weak_type": bool(getattr(out, "weak_type", False))}


def main():
    sys.path.insert(0, HERE)
    from jaxpr_recording import record_jaxprs_and_values
    warnings.simplefilter("ignore")
    record_jaxprs_and_values(cases, OUT, value_of, value_error="eager_error")


if __name__ == "__main__":
    main()
