"""Record JAX's jaxprs, values and errors for mutable array references (`jax.new_ref`, `ref[...]`,
`jax.ref.*`) and hijax programs (JAX's `Box`, a `VJPHiPrimitive`) into
tests/data/refs_hijax.json.

    /work/oracle/bin/python tests/oracle/record_refs_hijax.py
"""
import importlib
import os

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                   "refs_hijax.json")


def _square_prim(jax):
    """A VJPHiPrimitive squaring its operand (expand, vjp_fwd and vjp_bwd_retval)."""
    hjx = importlib.import_module(jax.__name__ + ".experimental.hijax")

    class Square(hjx.VJPHiPrimitive):
        def __init__(self, aval):
            self.in_avals, self.out_aval, self.params = (aval,), aval, {}
            super().__init__()

        def expand(self, x):
            return x * x

        def vjp_fwd(self, nzs, x):
            return x * x, x

        def vjp_bwd_retval(self, res, g):
            return (2.0 * res * g,)
    return Square


def cases(jax, jnp, lax, np):
    Box = importlib.import_module(jax.__name__ + "._src.hijax").Box
    x = jnp.arange(12.0, dtype=jnp.float32).reshape(3, 4)
    out = []

    def add(name, fn, *args):
        out.append((name, fn, args))

    def indexing(x, i):
        r = jax.new_ref(x)
        a = r[:, 1]
        b = r[1:3, ::2]
        c = r[i]
        d = r[0, i]
        r[i, 1:] = jnp.zeros(3, jnp.float32)
        e = r[-1]
        r[...] += 1
        return a, b, c, d, e, r[1, 2], jax.ref.freeze(r)
    add("ref_indexing", indexing, x, 1)

    def update(x):
        r = jax.new_ref(x)
        r[...] = r[...] + 1.0
        r[0] = 5.0
        y = r[1:]
        r.addupdate(jnp.ones(3, jnp.float32))
        return jax.ref.freeze(r), y
    add("ref_update", update, jnp.arange(3.0, dtype=jnp.float32))

    def api(x):
        r = jax.new_ref(x)
        old = jax.ref.swap(r, 0, 3.0)
        jax.ref.addupdate(r, 1, 2.0)
        got = jax.ref.get(r, ())
        jax.ref.set(r, (), jnp.zeros(3, jnp.float32))
        return got, old, jax.ref.freeze(r)
    add("ref_api", api, jnp.arange(3.0, dtype=jnp.float32))
    add("ref_scalar", lambda x: jax.new_ref(x)[()], 2.0)

    def into_jit(x, k):
        r = jax.new_ref(x)
        jax.jit(lambda ref, k: ref.__setitem__(..., ref[...] * k))(r, k)
        scaled = jax.jit(lambda ref: ref[1:] + 1.0)(r)
        return jax.ref.freeze(r), scaled
    add("ref_into_jit", into_jit, jnp.arange(3.0, dtype=jnp.float32), 2.0)
    add("ref_int_cast", lambda x: jax.ref.swap(jax.new_ref(x), 1, 7), jnp.arange(4))

    def bad_shape(x):
        r = jax.new_ref(x)
        r[...] = jnp.ones(5, x.dtype)
    add("ref_bad_shape", bad_shape, jnp.arange(4))

    def bad_dtype(x):
        r = jax.new_ref(x)
        r[...] = jnp.ones(4, jnp.float32)
    add("ref_bad_dtype", bad_dtype, jnp.arange(4))

    def box(x):
        b = Box(x)
        b.set(b.get() * 2.0)
        return b.get() + 1.0
    add("box", box, jnp.arange(3.0, dtype=jnp.float32))

    def box_retyped(x):
        b = Box(x)
        b.set((b.get(), jnp.int32(3)))
        y, n = b.get()
        return y * n
    add("box_retyped", box_retyped, jnp.arange(3.0, dtype=jnp.float32))

    Square = _square_prim(jax)
    v = jnp.arange(3.0, dtype=jnp.float32)
    sq = Square(jax.typeof(v))
    add("vjp_hi_primitive", lambda x: sq(x), v)
    add("vjp_hi_primitive_jit", lambda x: jax.jit(lambda y: sq(y))(x), v)
    add("vjp_hi_primitive_grad", jax.grad(lambda x: sq(x).sum()), v)
    return out


if __name__ == "__main__":
    from jaxpr_recording import record_jaxprs_and_values
    from record_numpy_manipulation import value_of
    record_jaxprs_and_values(cases, OUT, lambda out, np, jax: value_of(np, out))
