"""Record JAX 0.10.2's jnp.linalg: jaxprs (x64 off and on), eager values (dtype, shape and
numbers) and error texts, into tests/data/numpy_linalg.json (read by
tests/test_numpy_linalg.py).

    /work/oracle/bin/python tests/oracle/record_numpy_linalg.py

`jaxpr_cases` and `value_cases` take (jax, jnp, np) and are imported by the pyjax test too, so
both sides run the same programs.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "numpy_linalg.json")


def _inputs(np):
    f32 = np.float32
    rng = np.random.RandomState(0)
    sq3 = np.array([[2.0, 1.0, 0.5], [0.3, 3.0, 0.2], [0.5, -0.7, 2.0]], f32)
    sq4 = (rng.rand(4, 4) + 2 * np.eye(4)).astype(f32)
    spd = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], f32)
    tall = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.25]], f32)
    batch = (rng.rand(2, 3, 3) + 2 * np.eye(3)).astype(f32)
    vec3 = np.array([1.0, -2.0, 0.5], f32)
    mat32 = np.array([[1.0, 0.0], [0.5, 2.0], [-1.0, 1.0]], f32)
    c3 = (sq3 + 1j * sq3.T).astype(np.complex64)
    return dict(sq3=sq3, sq4=sq4, spd=spd, tall=tall, batch=batch, vec3=vec3, mat32=mat32,
                c3=c3, i3=np.array([[2, 1, 0], [1, 3, 1], [0, 1, 4]], np.int32),
                sing=np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], f32),
                t4=(rng.rand(2, 2, 2, 2) + np.eye(4).reshape(2, 2, 2, 2)).astype(f32))


def jaxpr_cases(jax, jnp, np):
    """(name, fn, args): the record is str(jax.make_jaxpr(fn)(*args)) or JAX's error."""
    LA = jnp.linalg
    d = _inputs(np)
    sq3, sq4, spd, tall, batch, vec3 = (d[k] for k in ("sq3", "sq4", "spd", "tall", "batch",
                                                        "vec3"))
    C = []

    def add(name, fn, *args):
        assert name not in {c[0] for c in C}, name
        C.append((name, fn, args))

    add("cholesky", LA.cholesky, spd)
    add("cholesky_upper", lambda a: LA.cholesky(a, upper=True), spd)
    add("cholesky_int", LA.cholesky, d["i3"])
    add("eigh", LA.eigh, spd)
    add("eigh_upper_nosym", lambda a: LA.eigh(a, UPLO="U", symmetrize_input=False), spd)
    add("eigvalsh", LA.eigvalsh, spd)
    add("eig", LA.eig, sq3)
    add("eigvals", LA.eigvals, sq3)
    add("svd", LA.svd, tall)
    add("svd_thin", lambda a: LA.svd(a, full_matrices=False), tall)
    add("svd_values", lambda a: LA.svd(a, compute_uv=False), tall)
    add("svd_hermitian", lambda a: LA.svd(a, hermitian=True), spd)
    add("svd_hermitian_values", lambda a: LA.svd(a, compute_uv=False, hermitian=True), spd)
    add("svdvals", LA.svdvals, tall)
    add("qr", LA.qr, tall)
    add("qr_complete", lambda a: LA.qr(a, mode="complete"), tall)
    add("qr_r", lambda a: LA.qr(a, mode="r"), tall)
    add("qr_raw", lambda a: LA.qr(a, mode="raw"), tall)
    add("solve_vector", LA.solve, sq3, vec3)
    add("solve_matrix", LA.solve, sq3, tall)
    add("solve_batched", LA.solve, batch, batch[..., :1])
    add("inv", LA.inv, sq3)
    add("det_2x2", LA.det, sq3[:2, :2])
    add("det_3x3", LA.det, sq3)
    add("det_4x4", LA.det, sq4)
    add("slogdet", LA.slogdet, sq4)
    add("slogdet_1x1", LA.slogdet, sq3[:1, :1])
    add("slogdet_2x2", LA.slogdet, sq3[:2, :2])
    add("slogdet_qr", lambda a: LA.slogdet(a, method="qr"), sq4)
    add("pinv", LA.pinv, tall)
    add("pinv_rtol", lambda a: LA.pinv(a, rtol=0.1), tall)
    add("matrix_power_0", lambda a: LA.matrix_power(a, 0), sq3)
    add("matrix_power_3", lambda a: LA.matrix_power(a, 3), sq3)
    add("matrix_power_5", lambda a: LA.matrix_power(a, 5), sq3)
    add("matrix_power_neg2", lambda a: LA.matrix_power(a, -2), sq3)
    add("matrix_rank", LA.matrix_rank, tall)
    add("matrix_rank_tol", lambda a: LA.matrix_rank(a, tol=0.5), tall)
    add("lstsq", LA.lstsq, tall, vec3)
    for ord_ in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        add(f"norm_matrix_{ord_}", lambda a, o=ord_: LA.norm(a, ord=o, axis=(0, 1)), tall)
    for ord_ in (None, 0, 1, 3, np.inf, -np.inf):
        add(f"norm_vector_{ord_}", lambda a, o=ord_: LA.norm(a, ord=o, axis=-1), tall)
    add("norm_default", LA.norm, batch)
    add("norm_keepdims", lambda a: LA.norm(a, ord=1, axis=(2, 1), keepdims=True), batch)
    add("vector_norm", lambda a: LA.vector_norm(a, ord=0.5), vec3)
    add("matrix_norm", lambda a: LA.matrix_norm(a, ord="nuc"), batch)
    add("cond", LA.cond, sq3)
    add("cond_1", lambda a: LA.cond(a, p=1), sq3)
    add("cond_neg2", lambda a: LA.cond(a, p=-2), sq3)
    add("cross", LA.cross, vec3, vec3[::-1].copy())
    add("outer", LA.outer, vec3, vec3)
    add("matrix_transpose", LA.matrix_transpose, batch)
    add("vecdot", LA.vecdot, tall, tall)
    add("matmul", LA.matmul, batch, sq3)
    add("tensordot", lambda a, b: LA.tensordot(a, b, axes=1), sq3, tall)
    add("diagonal", lambda a: LA.diagonal(a, offset=1), batch)
    add("trace", LA.trace, batch)
    add("tensorinv", LA.tensorinv, d["t4"])
    add("tensorsolve", LA.tensorsolve, d["t4"], sq3[:2, :2])
    add("multi_dot", lambda a, b, c: LA.multi_dot([a, b, c]), vec3, sq3, tall)
    # derivatives and batching
    add("grad_det", jax.grad(LA.det), sq4)
    add("grad_slogdet", jax.grad(lambda a: LA.slogdet(a)[1]), sq4)
    add("grad_slogdet_2x2", jax.grad(lambda a: LA.slogdet(a)[1]), sq3[:2, :2])
    add("grad_solve", jax.grad(lambda a, b: LA.solve(a, b).sum(), argnums=(0, 1)), sq3, vec3)
    add("grad_inv", jax.grad(lambda a: LA.inv(a).sum()), sq3)
    add("grad_pinv", jax.grad(lambda a: LA.pinv(a).sum()), tall)
    add("grad_norm", jax.grad(lambda a: LA.norm(a)), tall)
    add("grad_eigvalsh", jax.grad(lambda a: LA.eigvalsh(a).sum()), spd)
    add("grad_cholesky", jax.grad(lambda a: LA.cholesky(a).sum()), spd)
    add("jvp_det", lambda a, t: jax.jvp(LA.det, (a,), (t,)), sq4, sq4)
    add("vmap_solve", jax.vmap(LA.solve), batch, batch[..., 0])
    add("vmap_det", jax.vmap(LA.det), batch)
    add("vmap_inv", jax.vmap(LA.inv), batch)
    # errors
    add("error_solve_1d", LA.solve, vec3, vec3)
    add("error_solve_batched_1d", LA.solve, batch, batch[..., 0])
    add("error_inv_shape", LA.inv, tall)
    add("error_det_shape", LA.det, tall)
    add("error_slogdet_method", lambda a: LA.slogdet(a, method="x"), sq3)
    add("error_qr_mode", lambda a: LA.qr(a, mode="x"), sq3)
    add("error_eigh_uplo", lambda a: LA.eigh(a, UPLO="X"), sq3)
    add("error_norm_ord", lambda a: LA.norm(a, ord=3, axis=(0, 1)), sq3)
    add("error_norm_axes", lambda a: LA.norm(a, axis=(0, 1, 2)), batch)
    add("error_vector_norm_ord", lambda a: LA.vector_norm(a, ord="inf"), vec3)
    add("error_matrix_power", lambda a: LA.matrix_power(a, 2), tall)
    add("error_matrix_power_1d", lambda a: LA.matrix_power(a, 2), vec3)
    add("error_cond_1d", LA.cond, vec3)
    add("error_cond_square", lambda a: LA.cond(a, p=1), tall)
    add("error_cross", LA.cross, tall, tall)
    add("error_outer", LA.outer, sq3, vec3)
    add("error_matrix_transpose", LA.matrix_transpose, vec3)
    add("error_vecdot", LA.vecdot, tall, sq3)
    add("error_tensorinv", lambda a: LA.tensorinv(a, ind=1), d["t4"])
    add("error_tensorsolve", LA.tensorsolve, d["t4"], vec3)
    add("error_multi_dot_one", lambda a: LA.multi_dot([a]), sq3)
    add("error_multi_dot_shapes", lambda a, b: LA.multi_dot([a, b]), tall, tall)
    add("error_lstsq", LA.lstsq, sq3, d["mat32"])
    add("error_pinv_both", lambda a: LA.pinv(a, rtol=0.1, rcond=0.1), tall)
    add("error_matrix_rank_both", lambda a: LA.matrix_rank(a, rtol=0.1, tol=0.1), tall)
    return C


def value_cases(jax, jnp, np):
    """(name, fn, args): eager results, compared with tolerance (and exact dtypes/shapes)."""
    LA = jnp.linalg
    d = _inputs(np)
    C = []

    def add(name, fn, *args):
        C.append((name, fn, args))

    for k in ("sq3", "sq4", "c3", "i3"):
        add(f"det_{k}", LA.det, d[k])
        add(f"slogdet_{k}", LA.slogdet, d[k])
        add(f"inv_{k}", LA.inv, d[k])
        add(f"eigvals_{k}", LA.eigvals, d[k])
    add("det_sing", LA.det, d["sing"])
    add("slogdet_sing", LA.slogdet, d["sing"])
    add("det_batch", LA.det, d["batch"])
    add("slogdet_qr", lambda a: LA.slogdet(a, method="qr"), d["sq4"])
    add("cholesky", LA.cholesky, d["spd"])
    add("cholesky_upper", lambda a: LA.cholesky(a, upper=True), d["spd"])
    add("eigh", LA.eigh, d["spd"])
    add("eigvalsh_U", lambda a: LA.eigvalsh(a, UPLO="U"), d["spd"])
    add("svd", LA.svd, d["tall"])
    add("svd_thin", lambda a: LA.svd(a, full_matrices=False), d["tall"])
    add("svd_hermitian", lambda a: LA.svd(a, hermitian=True), d["sq3"] + d["sq3"].T)
    add("svdvals_batch", LA.svdvals, d["batch"])
    add("qr", LA.qr, d["tall"])
    add("qr_complete", lambda a: LA.qr(a, mode="complete"), d["tall"])
    add("qr_raw", lambda a: LA.qr(a, mode="raw"), d["tall"])
    add("solve", LA.solve, d["sq3"], d["vec3"])
    add("solve_batch", LA.solve, d["batch"], d["batch"][0])
    add("solve_int", LA.solve, d["i3"], d["i3"][0])
    add("pinv", LA.pinv, d["tall"])
    add("pinv_hermitian", lambda a: LA.pinv(a, hermitian=True), d["spd"])
    add("pinv_empty", LA.pinv, np.zeros((0, 3), np.float32))
    add("lstsq", LA.lstsq, d["tall"], d["vec3"])
    add("lstsq_rcond", lambda a, b: LA.lstsq(a, b, rcond=0.5), d["tall"], d["mat32"])
    add("matrix_rank", LA.matrix_rank, d["sing"])
    add("matrix_rank_1d", LA.matrix_rank, d["vec3"])
    add("matrix_rank_batch", lambda a: LA.matrix_rank(a, rtol=np.array([0.1, 0.9])), d["batch"])
    add("matrix_power_7", lambda a: LA.matrix_power(a, 7), d["sq3"])
    add("matrix_power_neg3", lambda a: LA.matrix_power(a, -3), d["sq3"])
    add("matrix_power_int", lambda a: LA.matrix_power(a, 2), d["i3"])
    for ord_ in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        add(f"norm_matrix_{ord_}", lambda a, o=ord_: LA.norm(a, ord=o, axis=(1, 2)), d["batch"])
    for ord_ in (None, 0, 1, 2, 3, 0.5, -1, np.inf, -np.inf):
        add(f"norm_vector_{ord_}", lambda a, o=ord_: LA.norm(a, ord=o, axis=0), d["tall"])
    add("norm_int", LA.norm, d["i3"])
    add("norm_complex", LA.norm, d["c3"])
    add("vector_norm_int", LA.vector_norm, d["i3"])
    add("vector_norm_0_int", lambda a: LA.vector_norm(a, ord=0), d["i3"])
    add("matrix_norm", LA.matrix_norm, d["batch"])
    add("cond", LA.cond, d["sq3"])
    add("cond_sing", LA.cond, d["sing"])
    add("cond_fro", lambda a: LA.cond(a, p="fro"), d["sq3"])
    add("cond_inf_sing", lambda a: LA.cond(a, p=np.inf), d["sing"])
    add("cross", LA.cross, d["batch"], d["batch"][::-1])
    add("outer_int", LA.outer, np.arange(3), d["vec3"])
    add("vecdot_complex", LA.vecdot, d["c3"], d["c3"])
    add("vecdot_axis0", lambda a, b: LA.vecdot(a, b, axis=0), d["tall"], d["mat32"])
    add("tensordot", LA.tensordot, d["batch"], d["sq3"])
    add("trace_offset", lambda a: LA.trace(a, offset=1), d["batch"])
    add("diagonal", lambda a: LA.diagonal(a, offset=-1), d["batch"])
    add("tensorinv", LA.tensorinv, d["t4"])
    add("tensorsolve", LA.tensorsolve, d["t4"], d["sq3"][:2, :2])
    add("multi_dot", lambda *a: LA.multi_dot(a), d["sq3"], d["tall"], d["mat32"].T, d["vec3"])
    e00 = np.zeros((0, 0), np.float32)
    add("det_empty", LA.det, e00)
    add("slogdet_empty_batch", LA.slogdet, np.zeros((2, 0, 0), np.float32))
    add("inv_empty", LA.inv, e00)
    add("solve_empty", LA.solve, e00, np.zeros((0,), np.float32))
    add("svdvals_empty", LA.svdvals, np.zeros((0, 3), np.float32))
    add("norm_empty", LA.norm, np.zeros((0, 3), np.float32))
    add("norm_empty_inf", lambda a: LA.norm(a, ord=np.inf, axis=(0, 1)),
        np.zeros((0, 3), np.float32))
    add("lstsq_empty", LA.lstsq, np.zeros((0, 2), np.float32), np.zeros((0,), np.float32))
    add("grad_det_sing", jax.grad(LA.det), d["sing"])
    add("grad_slogdet", jax.grad(lambda a: LA.slogdet(a)[1]), d["sq4"])
    add("grad_pinv", jax.grad(lambda a: LA.pinv(a).sum()), d["tall"])
    return C


def _encode(x, np):
    x = np.asarray(x)
    rec = {"dtype": str(x.dtype), "shape": list(x.shape)}
    flat = x.ravel()
    if np.iscomplexobj(flat):
        rec["real"] = [float(v) for v in flat.real]
        rec["imag"] = [float(v) for v in flat.imag]
    else:
        rec["value"] = [float(v) if np.isfinite(v) else str(float(v)) for v in flat]
    return rec


def _records(x64):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jaxpr_recording import _record, error_record

    records = _record(lambda jax, jnp, lax, np: jaxpr_cases(jax, jnp, np), x64)
    for rec in records:
        rec["kind"] = "jaxpr"
    for name, fn, args in value_cases(jax, jnp, np):
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


if __name__ == "__main__":
    from jaxpr_recording import write_records
    write_records(_records(False) + _records(True), OUT)
