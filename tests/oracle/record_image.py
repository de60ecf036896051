"""Record JAX 0.10.2's jax.image (resize, scale_and_translate) jaxprs, eager values and errors
into tests/data/image.json (read by tests/test_image.py).

    /work/oracle/bin/python tests/oracle/record_image.py

`cases(jax, jnp, lax, np)` builds (name, fn, args, traced); the pyjax test imports it, so both
sides run the same functions.  Each case is recorded with x64 off and on: the jaxpr text (or
JAX's error; not for traced=False) and the eager value (or error).
"""
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "image.json")
METHODS = ("linear", "cubic", "cubic-pytorch", "lanczos3", "lanczos5", "area")
ALIASES = ("bilinear", "trilinear", "triangle", "bicubic", "tricubic", "bicubic-pytorch")


def cases(jax, jnp, lax, np):
    """List of (name, fn, args, traced)."""
    image = jax.image
    C = []

    def add(name, fn, *args, traced=True):
        C.append((name, fn, args, traced))

    rng = np.random.default_rng(11)
    fdt = np.float64 if jax.config.jax_enable_x64 else np.float32
    img = rng.uniform(-1, 1, size=(6, 7)).astype(fdt)
    rgb = rng.uniform(0, 1, size=(2, 5, 6, 3)).astype(np.float32)
    vol = rng.normal(size=(4, 3, 5)).astype(np.float32)
    for m in METHODS:
        for aa in (True, False):
            tag = f"{m}_{'aa' if aa else 'noaa'}"
            add(f"up_{tag}", lambda x, m=m, aa=aa: image.resize(x, (9, 11), m, aa), img)
            add(f"down_{tag}", lambda x, m=m, aa=aa: image.resize(x, (3, 4), m, aa), img)
            add(f"mixed_{tag}", lambda x, m=m, aa=aa: image.resize(x, (2, 10), m, aa), img,
                traced=False)
            add(f"rgb_{tag}", lambda x, m=m, aa=aa: image.resize(x, (2, 8, 4, 3), m, aa), rgb,
                traced=False)
        add(f"vol_{m}", lambda x, m=m: image.resize(x, (6, 2, 7), m), vol, traced=False)
        add(f"grad_{m}", jax.grad(lambda x, m=m: (image.resize(x, (4, 9), m) ** 2).sum()),
            img)
        add(f"vmap_{m}", jax.vmap(lambda x, m=m: image.resize(x, (5, 4), m)), rgb[..., 0],
            traced=False)
        add(f"jit_{m}", jax.jit(lambda x, m=m: image.resize(x, (4, 9), m)), img, traced=False)
        add(f"same_shape_{m}", lambda x, m=m: image.resize(x, x.shape, m), img)
        add(f"to_one_{m}", lambda x, m=m: image.resize(x, (1, 1), m), img, traced=False)
    for m in ALIASES:
        add(f"alias_{m}", lambda x, m=m: image.resize(x, (4, 5), m), img, traced=False)
    for m in ("NEAREST", "LINEAR", "LANCZOS3", "LANCZOS5", "CUBIC", "CUBIC_PYTORCH", "AREA"):
        add(f"enum_{m}", lambda x, m=m: image.resize(x, (4, 9), image.ResizeMethod[m]), img,
            traced=False)
    add("nearest_up", lambda x: image.resize(x, (11, 13), "nearest"), img)
    add("nearest_down", lambda x: image.resize(x, (4, 3), "nearest"), img)
    add("nearest_int", lambda x: image.resize(x, (3, 9), "nearest"),
        np.arange(42, dtype=np.int32).reshape(6, 7))
    add("nearest_bool", lambda x: image.resize(x, (3, 9), "nearest"), img > 0)
    add("nearest_grad", jax.grad(lambda x: image.resize(x, (4, 10), "nearest").sum()), img)
    add("nearest_rgb", lambda x: image.resize(x, (1, 3, 11, 3), "nearest"), rgb)
    add("linear_uint8", lambda x: image.resize(x, (4, 9), "linear"),
        (rng.uniform(0, 255, (6, 7))).astype(np.uint8))
    add("linear_int", lambda x: image.resize(x, (4, 9), "linear"),
        np.arange(42, dtype=np.int32).reshape(6, 7))
    add("linear_f16", lambda x: image.resize(x, (4, 9), "linear"), img.astype(np.float16))
    add("linear_bf16", lambda x: image.resize(x, (4, 9), "linear"),
        img.astype(np.float32).astype(jnp.bfloat16), traced=False)
    add("linear_complex", lambda x: image.resize(x, (4, 9), "linear"),
        (img + 1j * img[::-1]).astype(np.complex64))
    add("linear_1d", lambda x: image.resize(x, (13,), "linear"), img[0])
    add("linear_scalar_weak", lambda: image.resize(2.0, (), "linear"), traced=False)
    add("linear_precision", lambda x: image.resize(x, (4, 9), "linear",
                                                   precision=lax.Precision.DEFAULT), img)
    add("resize_to_zero", lambda x: image.resize(x, (0, 7), "linear"), img)
    add("resize_from_one", lambda x: image.resize(x, (4, 3), "cubic"), img[:1, :1])
    add("resize_list_shape", lambda x: image.resize(x, [4, 9], "lanczos3"), img)
    add("resize_np_shape", lambda x: image.resize(x, np.array([4, 9]), "cubic"), img)
    add("err_rank", lambda x: image.resize(x, (4,), "linear"), img)
    add("err_method", lambda x: image.resize(x, (4, 9), "bogus"), img)
    add("err_float_shape", lambda x: image.resize(x, (4.5, 9), "linear"), img)
    add("err_negative_shape", lambda x: image.resize(x, (-1, 9), "linear"), img)
    add("err_traced_shape", lambda n: image.resize(img, (n, 9), "linear"), 4)

    # --- scale_and_translate -----------------------------------------------------------------
    st = image.scale_and_translate
    s2 = np.array([1.7, 0.6], np.float32)
    t2 = np.array([0.3, -1.2], np.float32)
    for m in METHODS:
        for aa in (True, False):
            tag = f"{m}_{'aa' if aa else 'noaa'}"
            add(f"st_{tag}", lambda x, s, t, m=m, aa=aa: st(x, (8, 5), (0, 1), s, t, m, aa),
                img, s2, t2)
        add(f"st_grad_{m}", jax.grad(lambda x, s, t, m=m: (st(
            x, (8, 5), (0, 1), s, t, m) ** 2).sum(), argnums=(0, 1, 2)), img, s2, t2,
            traced=False)
    add("st_grad_jaxpr", jax.grad(lambda x, s, t: (st(x, (8, 5), (0, 1), s, t, "linear") ** 2
                                                   ).sum(), argnums=(0, 1, 2)), img, s2, t2)
    add("st_one_dim", lambda x: st(x, (6, 10), (1,), np.array([1.5]), np.array([0.5]),
                                   "cubic"), img)
    add("st_neg_axis", lambda x: st(x, (6, 10), (-1,), [1.5], [0.0], "linear"), img)
    add("st_python_scalars", lambda x: st(x, (12, 7), (0,), [2.0], [0.25], "lanczos3"), img)
    add("st_no_dims", lambda x: st(x, (6, 7), (), [], [], "linear"), img)
    add("st_int_scale", lambda x: st(x, (12, 7), (0,), np.array([2]), np.array([1]), "linear"),
        img)
    add("st_rgb", lambda x, s, t: st(x, (2, 9, 4, 3), (1, 2), s, t, "cubic"), rgb, s2, t2)
    add("st_f64_scale", lambda x: st(x, (8, 5), (0, 1), s2.astype(np.float64), t2, "linear"),
        img)
    add("st_align_corners", lambda x: st(x, (11, 7), (0,), [10 / 5], [0.5 * (1 - 10 / 5)],
                                         "linear"), img)
    add("st_vmap_scale", jax.vmap(lambda s: st(img, (8, 5), (0, 1), s, t2, "linear")),
        np.stack([s2, s2 * 2, s2 / 3]))
    add("st_err_nearest", lambda x: st(x, (8, 5), (0, 1), s2, t2, "nearest"), img)
    add("st_err_rank", lambda x: st(x, (8,), (0,), s2[:1], t2[:1], "linear"), img)
    add("st_err_method", lambda x: st(x, (8, 5), (0, 1), s2, t2, "cubic-tf"), img)
    add("method_from_string", lambda: image.ResizeMethod.from_string("bicubic").name,
        traced=False)
    return C


def value_of(out, np, jax=None):
    """An eager result as JSON: nested (dtype, shape, weak type, values) records."""
    if isinstance(out, str):
        return out
    if isinstance(out, (tuple, list)):
        return [value_of(o, np) for o in out]
    arr = np.asarray(out)
    if arr.dtype.kind == "c":
        values = np.stack([arr.real, arr.imag], -1).astype(np.float64).tolist()
    elif arr.dtype.kind == "f" or arr.dtype.name == "bfloat16":
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
