"""Record JAX 0.10.2's jax.scipy.linalg: jaxprs (x64 off and on) for a sample of programs,
eager values (dtype, shape, weak type and numbers) and error texts, into
tests/data/scipy_linalg.json (read by tests/test_scipy_linalg.py).

    /work/oracle/bin/python tests/oracle/record_scipy_linalg.py

`jaxpr_cases` and `value_cases` take (jax, jnp, np) and are imported by the pyjax test too, so
both sides run the same programs.
"""
import importlib
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "scipy_linalg.json")


def scipy_linalg(jax):
    """jax.scipy.linalg (or pyjax.scipy.linalg), imported."""
    return importlib.import_module(jax.__name__ + ".scipy.linalg")


def inputs(np):
    """The matrices the cases (and the pyjax tests) run on, float32."""
    f32 = np.float32
    rng = np.random.RandomState(0)
    sq3 = np.array([[2.0, 1.0, 0.5], [0.3, 3.0, 0.2], [0.5, -0.7, 2.0]], f32)
    spd = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], f32)
    return dict(
        sq3=sq3, spd=spd,
        sq4=(rng.rand(4, 4) + 2 * np.eye(4)).astype(f32),
        upper=np.triu(sq3 + 1.0).astype(f32),
        tall=np.array([[1.0, 2.0, 0.5], [0.5, -1.0, 2.0], [3.0, 0.25, 1.0], [1.0, 1.0, -1.0]],
                      f32),
        wide=np.array([[1.0, 2.0, 0.5, 3.0], [0.5, -1.0, 2.0, 1.5], [3.0, 0.25, 1.0, -2.0]],
                      f32),
        batch=(rng.rand(2, 3, 3) + 2 * np.eye(3)).astype(f32),
        spd_batch=np.stack([spd, spd + np.eye(3, dtype=f32)]),
        vec3=np.array([1.0, -2.0, 0.5], f32),
        vec4=np.array([1.0, -2.0, 0.5, 3.0], f32),
        mat32=np.array([[1.0, 0.0], [0.5, 2.0], [-1.0, 1.0]], f32),
        c3=(sq3 + 1j * sq3.T).astype(np.complex64),
        i3=np.array([[2, 1, 0], [1, 3, 1], [0, 1, 4]], np.int32),
        rot=np.array([[0.0, 3.0, 3.0], [0.0, 1.0, 2.0], [2.0, 0.0, 1.0]], f32),
        b2=np.array([[1.0, 0.5], [-0.25, 2.0]], f32),
        c32=np.array([[1.0, 2.0], [0.0, -1.0], [3.0, 0.5]], f32),
        d5=np.array([1.0, 2.0, 3.0, 4.0, 2.5], f32),
        e4=np.array([1.0, 0.5, -1.0, 0.75], f32),
    )


def jaxpr_cases(jax, jnp, np):
    """(name, fn, args): the record is str(jax.make_jaxpr(fn)(*args)) or JAX's error."""
    sl = scipy_linalg(jax)
    d = inputs(np)
    sq3, spd, tall, vec3 = d["sq3"], d["spd"], d["tall"], d["vec3"]
    C = []

    def add(name, fn, *args):
        assert name not in {c[0] for c in C}, name
        C.append((name, fn, args))

    add("cholesky", sl.cholesky, spd)
    add("cholesky_lower", lambda a: sl.cholesky(a, lower=True), spd)
    add("cho_solve", lambda a, b: sl.cho_solve(sl.cho_factor(a), b), spd, vec3)
    add("cho_solve_lower_matrix", lambda a, b: sl.cho_solve(sl.cho_factor(a, lower=True), b),
        spd, d["mat32"])
    add("svd", sl.svd, tall)
    add("svd_values", lambda a: sl.svd(a, compute_uv=False), tall)
    add("det", sl.det, sq3)
    add("eigh", sl.eigh, spd)
    add("eigh_upper_values", lambda a: sl.eigh(a, lower=False, eigvals_only=True), spd)
    add("schur", sl.schur, sq3)
    add("schur_complex", lambda a: sl.schur(a, output="complex"), sq3)
    add("inv", sl.inv, sq3)
    add("lu_factor", sl.lu_factor, sq3)
    add("lu_solve", lambda a, b: sl.lu_solve(sl.lu_factor(a), b), sq3, vec3)
    add("lu_solve_trans", lambda a, b: sl.lu_solve(sl.lu_factor(a), b, trans=1), sq3,
        d["mat32"])
    add("lu", sl.lu, sq3)
    add("lu_permute_l", lambda a: sl.lu(a, permute_l=True), tall)
    add("qr", sl.qr, tall)
    add("qr_economic", lambda a: sl.qr(a, mode="economic"), tall)
    add("qr_r_pivoting", lambda a: sl.qr(a, mode="r", pivoting=True), tall)
    add("qr_multiply", sl.qr_multiply, tall, d["vec4"])
    add("qr_multiply_left", lambda a, c: sl.qr_multiply(a, c, mode="left"), tall, sq3)
    add("solve", sl.solve, sq3, vec3)
    add("solve_pos", lambda a, b: sl.solve(a, b, assume_a="pos"), spd, vec3)
    add("solve_pos_matrix", lambda a, b: sl.solve(a, b, assume_a="pos", lower=True), spd,
        d["mat32"])
    add("solve_triangular", sl.solve_triangular, d["upper"], vec3)
    add("solve_triangular_T_unit", lambda a, b: sl.solve_triangular(
        a, b, trans="T", lower=True, unit_diagonal=True), sq3, d["mat32"])
    add("hessenberg", sl.hessenberg, d["sq4"])
    add("hessenberg_q", lambda a: sl.hessenberg(a, calc_q=True), d["sq4"])
    add("rsf2csf", sl.rsf2csf, d["rot"], sq3)
    add("expm", sl.expm, sq3)
    add("expm_upper", lambda a: sl.expm(a, upper_triangular=True, max_squarings=3), d["upper"])
    add("expm_frechet", sl.expm_frechet, sq3, spd)
    add("sqrtm", sl.sqrtm, spd)
    add("funm", lambda a: sl.funm(a, jnp.sin), spd)
    add("polar", sl.polar, tall)
    add("polar_svd_left", lambda a: sl.polar(a, side="left", method="svd"), tall)
    add("solve_sylvester", sl.solve_sylvester, sq3, d["b2"], d["c32"])
    add("solve_sylvester_eigen", lambda a, b, c: sl.solve_sylvester(a, b, c, method="eigen"),
        sq3, d["b2"], d["c32"])
    add("eigh_tridiagonal", lambda a, b: sl.eigh_tridiagonal(a, b, eigvals_only=True),
        d["d5"], d["e4"])
    add("block_diag", sl.block_diag, sq3, vec3, np.float32(2.0))
    add("toeplitz", sl.toeplitz, vec3)
    add("toeplitz_cr", sl.toeplitz, vec3, d["vec4"])
    add("hankel", sl.hankel, vec3, d["vec4"])
    add("circulant", sl.circulant, vec3)
    add("leslie", sl.leslie, d["vec4"], vec3)
    add("companion", sl.companion, d["vec4"])
    add("fiedler", sl.fiedler, vec3)
    add("fiedler_companion", sl.fiedler_companion, d["d5"])
    add("convolution_matrix", lambda a: sl.convolution_matrix(a, 4, mode="same"), vec3)
    add("hilbert", lambda: sl.hilbert(3))
    add("invhilbert", lambda: sl.invhilbert(3))
    add("pascal", lambda: sl.pascal(3))
    add("invpascal_lower", lambda: sl.invpascal(3, kind="lower"))
    add("helmert_full", lambda: sl.helmert(3, full=True))
    add("hadamard", lambda: sl.hadamard(4))
    add("dft_sqrtn", lambda: sl.dft(3, scale="sqrtn"))
    # derivatives and batching
    add("grad_cholesky", jax.grad(lambda a: sl.cholesky(a).sum()), spd)
    add("grad_solve_triangular", jax.grad(lambda a, b: sl.solve_triangular(a, b).sum(),
                                          argnums=(0, 1)), d["upper"], vec3)
    add("grad_expm", jax.grad(lambda a: sl.expm(a).sum()), sq3)
    add("jvp_lu", lambda a, t: jax.jvp(sl.lu, (a,), (t,)), sq3, spd)
    add("vmap_expm", jax.vmap(sl.expm), d["batch"])
    add("vmap_cho_solve", jax.vmap(lambda a, b: sl.cho_solve((a, False), b)), d["spd_batch"],
        d["batch"][..., 0])
    # errors
    add("error_schur_output", lambda a: sl.schur(a, output="x"), sq3)
    add("error_solve_assume_a", lambda a, b: sl.solve(a, b, assume_a="x"), sq3, vec3)
    add("error_qr_mode", lambda a: sl.qr(a, mode="x"), sq3)
    add("error_solve_triangular_trans", lambda a, b: sl.solve_triangular(a, b, trans=3),
        sq3, vec3)
    add("error_expm_shape", sl.expm, tall)
    add("error_expm_frechet_shapes", sl.expm_frechet, sq3, d["sq4"])
    add("error_eigh_b", sl.eigh, sq3, sq3)
    add("error_polar_side", lambda a: sl.polar(a, side="x"), sq3)
    add("error_polar_qdwh_wide", sl.polar, d["wide"])
    add("error_polar_method", lambda a: sl.polar(a, method="x"), sq3)
    add("error_qr_multiply_mode", lambda a, c: sl.qr_multiply(a, c, mode="x"), tall, vec3)
    add("error_qr_multiply_shape", sl.qr_multiply, tall, vec3)
    add("error_block_diag_3d", sl.block_diag, d["batch"])
    add("error_hadamard", lambda: sl.hadamard(6))
    add("error_dft_scale", lambda: sl.dft(3, scale="x"))
    add("error_dft_dtype", lambda: sl.dft(3, dtype=np.float32))
    add("error_pascal_kind", lambda: sl.pascal(3, kind="x"))
    add("error_invpascal_kind", lambda: sl.invpascal(3, kind="x"))
    add("error_helmert", lambda: sl.helmert(0))
    add("error_leslie_lengths", sl.leslie, d["vec4"], d["vec4"])
    add("error_leslie_short", sl.leslie, vec3[:1], vec3[:0])
    add("error_companion", sl.companion, vec3[:1])
    add("error_fiedler_companion", sl.fiedler_companion, vec3[:0])
    add("error_hankel_scalar", sl.hankel, np.float32(1.0))
    add("error_convolution_matrix_n", lambda a: sl.convolution_matrix(a, 0), vec3)
    add("error_convolution_matrix_mode", lambda a: sl.convolution_matrix(a, 2, mode="x"), vec3)
    add("error_rsf2csf_square", sl.rsf2csf, tall, sq3)
    add("error_rsf2csf_match", sl.rsf2csf, sq3, d["sq4"])
    add("error_eigh_tridiagonal_dtypes", sl.eigh_tridiagonal, d["d5"],
        d["e4"].astype(np.float16))
    add("error_eigh_tridiagonal_range", lambda a, b: sl.eigh_tridiagonal(
        a, b, eigvals_only=True, select="i", select_range=(3, 1)), d["d5"], d["e4"])
    add("error_solve_sylvester_shapes", sl.solve_sylvester, sq3, sq3, d["c32"])
    add("error_solve_sylvester_method", lambda a, b, c: sl.solve_sylvester(
        a, b, c, method="x"), sq3, d["b2"], d["c32"])
    add("error_sqrtm_blocksize", lambda a: sl.sqrtm(a, blocksize=2), spd)
    add("error_funm_shape", lambda a: sl.funm(a, jnp.sin), tall)
    return C


def value_cases(jax, jnp, np):
    """(name, fn, args): eager results, compared with tolerance (and exact dtypes/shapes)."""
    sl = scipy_linalg(jax)
    d = inputs(np)
    sq3, spd, tall, wide, vec3 = d["sq3"], d["spd"], d["tall"], d["wide"], d["vec3"]
    C = []

    def add(name, fn, *args):
        assert name not in {c[0] for c in C}, name
        C.append((name, fn, args))

    add("cholesky", sl.cholesky, spd)
    add("cholesky_lower_batch", lambda a: sl.cholesky(a, lower=True), d["spd_batch"])
    add("cholesky_int", sl.cholesky, d["i3"])
    add("cholesky_complex", sl.cholesky, d["c3"] @ d["c3"].conj().T)
    add("cho_solve_vec", lambda a, b: sl.cho_solve(sl.cho_factor(a), b), spd, vec3)
    add("cho_solve_mat_lower", lambda a, b: sl.cho_solve(sl.cho_factor(a, lower=True), b),
        spd, d["mat32"])
    add("svd", sl.svd, tall)
    add("svd_thin", lambda a: sl.svd(a, full_matrices=False), wide)
    add("svd_values_int", lambda a: sl.svd(a, compute_uv=False), d["i3"])
    add("det", sl.det, d["sq4"])
    add("det_batch", sl.det, d["batch"])
    add("eigh", sl.eigh, spd)
    add("eigh_upper", lambda a: sl.eigh(a, lower=False), sq3)
    add("eigh_values", lambda a: sl.eigh(a, eigvals_only=True), d["spd_batch"])
    add("schur", sl.schur, spd)
    add("schur_complex", lambda a: sl.schur(a, output="complex"), d["rot"])
    add("inv", sl.inv, sq3)
    add("lu_factor", sl.lu_factor, d["sq4"])
    add("lu_factor_tall", sl.lu_factor, tall)
    for trans in (0, 1, 2):
        add(f"lu_solve_{trans}", lambda a, b, t=trans: sl.lu_solve(sl.lu_factor(a), b, trans=t),
            d["c3"], vec3)
    add("lu_solve_matrix", lambda a, b: sl.lu_solve(sl.lu_factor(a), b), sq3, d["mat32"])
    add("lu", sl.lu, sq3)
    add("lu_tall", sl.lu, tall)
    add("lu_wide_permute_l", lambda a: sl.lu(a, permute_l=True), wide)
    add("qr_full", sl.qr, tall)
    add("qr_economic", lambda a: sl.qr(a, mode="economic"), tall)
    add("qr_r", lambda a: sl.qr(a, mode="r"), wide)
    add("qr_pivoting", lambda a: sl.qr(a, pivoting=True), wide)
    add("qr_economic_pivoting", lambda a: sl.qr(a, mode="economic", pivoting=True), tall)
    add("qr_multiply_right_1d", sl.qr_multiply, tall, d["vec4"])
    add("qr_multiply_left", lambda a, c: sl.qr_multiply(a, c, mode="left"), tall, sq3)
    add("qr_multiply_left_1d", lambda a, c: sl.qr_multiply(a, c, mode="left"), tall, vec3)
    add("qr_multiply_conjugate", lambda a, c: sl.qr_multiply(a, c, conjugate=True),
        d["c3"], d["c3"][:2])
    add("qr_multiply_pivoting", lambda a, c: sl.qr_multiply(a, c, pivoting=True), wide,
        d["mat32"].T)
    add("qr_multiply_left_conjugate", lambda a, c: sl.qr_multiply(
        a, c, mode="left", conjugate=True), d["c3"], d["c3"][:, :2])
    add("solve", sl.solve, sq3, vec3)
    add("solve_sym", lambda a, b: sl.solve(a, b, assume_a="sym"), spd, d["mat32"])
    add("solve_pos", lambda a, b: sl.solve(a, b, assume_a="pos"), spd, vec3)
    add("solve_pos_lower_batch", lambda a, b: sl.solve(a, b, assume_a="pos", lower=True),
        d["spd_batch"], d["batch"])
    add("solve_int", sl.solve, d["i3"], d["i3"][0])
    for trans in (0, 1, 2, "N", "T", "C"):
        add(f"solve_triangular_{trans}", lambda a, b, t=trans: sl.solve_triangular(
            a, b, trans=t), d["c3"], vec3)
    add("solve_triangular_lower_unit", lambda a, b: sl.solve_triangular(
        a, b, lower=True, unit_diagonal=True), sq3, d["mat32"])
    add("solve_triangular_batch", sl.solve_triangular, d["batch"], d["batch"])
    add("hessenberg", sl.hessenberg, d["sq4"])
    add("hessenberg_q", lambda a: sl.hessenberg(a, calc_q=True), d["sq4"])
    add("hessenberg_q_complex", lambda a: sl.hessenberg(a, calc_q=True), d["c3"])
    add("hessenberg_empty", lambda a: sl.hessenberg(a, calc_q=True), np.zeros((0, 0), np.float32))
    add("rsf2csf", lambda a: sl.rsf2csf(*sl.schur(a)), d["rot"])
    add("rsf2csf_1x1", sl.rsf2csf, sq3[:1, :1], sq3[:1, :1])
    add("solve_sylvester", sl.solve_sylvester, sq3, d["b2"], d["c32"])
    add("solve_sylvester_eigen", lambda a, b, c: sl.solve_sylvester(a, b, c, method="eigen"),
        sq3, d["b2"], d["c32"])
    add("solve_sylvester_singular", sl.solve_sylvester, sq3, -sq3, sq3)
    add("solve_sylvester_complex", sl.solve_sylvester, d["c3"], d["b2"], d["c32"])
    for scale in (0.005, 0.1, 0.5, 1.0, 2.0, 8.0, 20.0):
        add(f"expm_{scale}", lambda a, s=scale: sl.expm(s * a), sq3)
    add("expm_upper", lambda a: sl.expm(a, upper_triangular=True), d["upper"])
    add("expm_too_many_squarings", lambda a: sl.expm(a, max_squarings=1), 30 * sq3)
    add("expm_batch", sl.expm, d["batch"])
    add("expm_complex", sl.expm, d["c3"])
    add("expm_int", sl.expm, d["i3"])
    add("expm_frechet", sl.expm_frechet, sq3, spd)
    add("expm_frechet_only", lambda a, e: sl.expm_frechet(a, e, compute_expm=False),
        4 * sq3, spd)
    add("sqrtm", sl.sqrtm, spd)
    add("sqrtm_nonsym", sl.sqrtm, sq3)
    add("funm_sin", lambda a: sl.funm(a, jnp.sin), spd)
    add("funm_exp_err", lambda a: sl.funm(a, jnp.exp, disp=False), sq3)
    add("polar", sl.polar, tall)
    add("polar_left_wide", lambda a: sl.polar(a, side="left"), wide)
    add("polar_svd", lambda a: sl.polar(a, method="svd"), sq3)
    add("polar_svd_left", lambda a: sl.polar(a, side="left", method="svd"), tall)
    add("polar_batch", sl.polar, d["batch"])
    add("eigh_tridiagonal_values", lambda a, b: sl.eigh_tridiagonal(a, b, eigvals_only=True),
        d["d5"], d["e4"])
    add("eigh_tridiagonal_select", lambda a, b: sl.eigh_tridiagonal(
        a, b, eigvals_only=True, select="i", select_range=(1, 3)), d["d5"], d["e4"])
    add("eigh_tridiagonal_tol", lambda a, b: sl.eigh_tridiagonal(
        a, b, eigvals_only=True, tol=1e-2), d["d5"], d["e4"])
    add("eigh_tridiagonal_vectors", sl.eigh_tridiagonal, d["d5"], d["e4"])
    add("eigh_tridiagonal_cluster", sl.eigh_tridiagonal,
        np.ones(4, np.float32), np.array([0.0, 1e-9, 0.0], np.float32))
    add("eigh_tridiagonal_complex", lambda a, b: sl.eigh_tridiagonal(a, b, eigvals_only=True),
        d["d5"].astype(np.complex64), (d["e4"] * (1 + 1j)).astype(np.complex64))
    add("eigh_tridiagonal_1", sl.eigh_tridiagonal, vec3[:1], vec3[:0])
    add("block_diag", sl.block_diag, sq3, vec3, np.float32(2.0), d["mat32"])
    add("block_diag_int_float", sl.block_diag, d["i3"], 2.5)
    add("block_diag_empty", sl.block_diag)
    add("toeplitz", sl.toeplitz, vec3)
    add("toeplitz_cr", sl.toeplitz, vec3, d["vec4"])
    add("toeplitz_complex", sl.toeplitz, d["c3"][0])
    add("toeplitz_batch", sl.toeplitz, d["batch"][:, 0], d["vec4"])
    add("toeplitz_int", sl.toeplitz, np.arange(1, 4))
    add("toeplitz_empty", sl.toeplitz, vec3[:0], vec3)
    add("hankel", sl.hankel, vec3)
    add("hankel_cr", sl.hankel, vec3, d["vec4"])
    add("hankel_batch", sl.hankel, d["batch"][:, 0], d["vec4"])
    add("hankel_int", sl.hankel, np.arange(1, 4))
    add("circulant", sl.circulant, d["vec4"])
    add("circulant_batch", sl.circulant, d["batch"][0])
    add("leslie", sl.leslie, d["vec4"], vec3)
    add("leslie_int", sl.leslie, np.arange(3), np.array([0.5, 0.25], np.float32))
    add("companion", sl.companion, d["vec4"])
    add("companion_int_batch", sl.companion, np.arange(1, 7).reshape(2, 3))
    add("fiedler", sl.fiedler, np.array([1, 4, 12, 45, 77]))
    add("fiedler_batch", sl.fiedler, d["batch"][0])
    for k in (1, 2, 3, 6):
        add(f"fiedler_companion_{k}", sl.fiedler_companion,
            np.arange(1, k + 1, dtype=np.float32) * np.float32(1.5))
    for mode in ("full", "same", "valid"):
        for n in (2, 5):
            add(f"convolution_matrix_{mode}_{n}",
                lambda a, m=mode, k=n: sl.convolution_matrix(a, k, mode=m), d["vec4"])
    add("convolution_matrix_batch", lambda a: sl.convolution_matrix(a, 3), d["batch"][0])
    for n in (1, 4):
        add(f"hilbert_{n}", lambda k=n: sl.hilbert(k))
        add(f"invhilbert_{n}", lambda k=n: sl.invhilbert(k))
        add(f"helmert_{n}", lambda k=n: sl.helmert(k))
        add(f"helmert_full_{n}", lambda k=n: sl.helmert(k, full=True))
        add(f"hadamard_{n}", lambda k=n: sl.hadamard(k))
    add("hadamard_float", lambda: sl.hadamard(8, dtype=np.float32))
    for kind in (None, "lower", "upper", "symmetric"):
        add(f"pascal_{kind}", lambda k=kind: sl.pascal(5, kind=k))
        add(f"invpascal_{kind}", lambda k=kind: sl.invpascal(5, kind=k))
    for scale in (None, "sqrtn", "n"):
        add(f"dft_{scale}", lambda s=scale: sl.dft(4, scale=s))
    add("dft_complex128", lambda: sl.dft(3, dtype=np.complex128))
    # derivatives (JAX's rules, through jit and the custom solves)
    add("grad_cholesky", jax.grad(lambda a: sl.cholesky(a).sum()), spd)
    add("grad_cho_solve", jax.grad(lambda a, b: sl.cho_solve((a, False), b).sum(),
                                   argnums=(0, 1)), sl.cholesky(spd), vec3)
    add("grad_solve_pos", jax.grad(lambda a, b: sl.solve(a, b, assume_a="pos").sum(),
                                   argnums=(0, 1)), spd, vec3)
    add("grad_solve_triangular_T", jax.grad(lambda a, b: sl.solve_triangular(
        a, b, trans=1).sum(), argnums=(0, 1)), d["upper"], vec3)
    add("grad_lu_solve", jax.grad(lambda a, b: sl.lu_solve(sl.lu_factor(a), b).sum(),
                                  argnums=(0, 1)), sq3, vec3)
    add("grad_lu", jax.grad(lambda a: sum(x.sum() for x in sl.lu(a))), sq3)
    add("grad_qr", jax.grad(lambda a: sum(x.sum() for x in sl.qr(a, mode="economic"))), tall)
    add("grad_svd_values", jax.grad(lambda a: sl.svd(a, compute_uv=False).sum()), tall)
    add("grad_eigh", jax.grad(lambda a: (sl.eigh(a)[1] ** 2 * sl.eigh(a)[0]).sum()), spd)
    add("grad_det", jax.grad(sl.det), sq3)
    add("grad_inv", jax.grad(lambda a: sl.inv(a).sum()), sq3)
    for scale in (0.1, 1.0, 8.0):
        add(f"grad_expm_{scale}", jax.grad(lambda a, s=scale: sl.expm(s * a).sum()), sq3)
    add("hessian_expm", jax.hessian(lambda a: sl.expm(a)[0, 1]), sq3[:2, :2])
    add("jvp_sqrtm", lambda a, t: jax.jvp(sl.sqrtm, (a,), (t,)), spd, sq3)
    add("grad_polar_svd", jax.grad(lambda a: sl.polar(a, method="svd")[1].sum()), sq3)
    add("grad_polar_qdwh", jax.grad(lambda a: sl.polar(a)[0].sum()), sq3)
    add("grad_toeplitz", jax.grad(lambda c, r: (sl.toeplitz(c, r) ** 2).sum(), argnums=(0, 1)),
        vec3, d["vec4"])
    add("grad_block_diag", jax.grad(lambda a, b: (sl.block_diag(a, b) ** 2).sum(),
                                    argnums=(0, 1)), sq3, d["mat32"])
    add("vmap_lu", jax.vmap(sl.lu), d["batch"])
    add("vmap_sqrtm", jax.vmap(sl.sqrtm), d["spd_batch"])
    add("vmap_funm", jax.vmap(lambda a: sl.funm(a, jnp.cos)), d["batch"])
    add("vmap_eigh_tridiagonal", jax.vmap(lambda a, b: sl.eigh_tridiagonal(
        a, b, eigvals_only=True)), np.stack([d["d5"], d["d5"][::-1]]),
        np.stack([d["e4"], d["e4"] * 2]))
    add("vmap_hilbert_like_toeplitz", jax.vmap(sl.toeplitz, in_axes=(0, None)),
        d["batch"][0], d["vec4"])
    return C


def _encode(x, np):
    x = np.asarray(x)
    rec = {"dtype": str(x.dtype), "shape": list(x.shape)}
    flat = x.ravel()
    if np.iscomplexobj(flat):
        rec["real"] = [float(v) if np.isfinite(v) else str(float(v)) for v in flat.real]
        rec["imag"] = [float(v) if np.isfinite(v) else str(float(v)) for v in flat.imag]
    else:
        rec["value"] = [float(v) if np.isfinite(v) else str(float(v)) for v in flat]
    return rec


def value_records(jax, cases, x64):
    """{kind: value, name, x64, outputs, weak} (or error) for each (name, fn, args)."""
    import numpy as np
    from jaxpr_recording import error_record

    records = []
    for name, fn, args in cases:
        rec = {"kind": "value", "name": name, "x64": x64}
        try:
            out = fn(*args)
        except Exception as e:  # noqa: BLE001 - JAX's error is itself the record
            rec["error"] = error_record(e)
            records.append(rec)
            continue
        leaves = jax.tree_util.tree_leaves(out)
        rec["outputs"] = [_encode(leaf, np) for leaf in leaves]
        rec["weak"] = [bool(getattr(leaf, "weak_type", False)) for leaf in leaves]
        records.append(rec)
    return records


def _records(x64):
    import warnings

    import jax
    import jax.numpy as jnp
    import numpy as np
    from jaxpr_recording import _record

    warnings.simplefilter("ignore")
    records = _record(lambda jax, jnp, lax, np: jaxpr_cases(jax, jnp, np), x64)
    for rec in records:
        rec["kind"] = "jaxpr"
    return records + value_records(jax, value_cases(jax, jnp, np), x64)


if __name__ == "__main__":
    from jaxpr_recording import write_records
    write_records(_records(False) + _records(True), OUT)
