"""Record JAX 0.10.2's jaxprs and values for every public `jax.random` function, a couple of
shapes and dtypes each, typed and raw keys, and the transformations users apply to samplers
(grad of the gamma family, vmap over keys), into tests/data/random_sweep.json.

    /work/oracle/bin/python tests/oracle/record_random_sweep.py

Values are stored as raw bits (`bits_of`), so tests/test_random_sweep.py can hold pyjax to
JAX's numbers exactly, not to a tolerance.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "random_sweep.json")


def cases(jax, jnp, lax, np):
    """(name, fn, args): each fn takes a key (typed unless the name says raw) and returns a
    sample; make_jaxpr of it and its eager value are recorded."""
    r = jax.random
    k, raw = r.key(1), r.PRNGKey(1)
    out = []

    def add(name, fn, *args):
        out.append((name, fn, args if args else (k,)))

    f16, f32 = jnp.float16, jnp.float32
    # the common paths
    add("uniform", lambda k: r.uniform(k, (3,)))
    add("uniform raw", lambda k: r.uniform(k, (2, 3)), raw)
    add("uniform f16 range", lambda k: r.uniform(k, (4,), f16, -2.0, 3.0))
    add("uniform bf16", lambda k: r.uniform(k, (3,), jnp.bfloat16))
    add("normal", lambda k: r.normal(k, (3,)))
    add("normal raw", lambda k: r.normal(k, (2, 2)), raw)
    add("normal f16", lambda k: r.normal(k, (5,), f16))
    add("normal complex64", lambda k: r.normal(k, (2,), jnp.complex64))
    add("bits", lambda k: r.bits(k, (3,)))
    add("bits uint8 raw", lambda k: r.bits(k, (2, 3), jnp.uint8), raw)
    add("split", lambda k: r.split(k))
    add("split 3 raw", lambda k: r.split(k, 3), raw)
    add("split shape", lambda k: r.split(k, (2, 2)))
    add("fold_in", lambda k: r.fold_in(k, 7))
    add("fold_in raw traced", lambda k, d: r.fold_in(k, d), raw, jnp.uint32(5))
    add("key_data", r.key_data)
    add("key_data raw", r.key_data, raw)
    add("wrap_key_data", r.wrap_key_data, raw)
    add("clone", r.clone)
    add("key", r.key, 3)
    add("PRNGKey", r.PRNGKey, 3)
    # discrete
    add("randint", lambda k: r.randint(k, (4,), 0, 10))
    add("randint int8 raw", lambda k: r.randint(k, (2, 2), -5, 5, jnp.int8), raw)
    add("bernoulli", lambda k: r.bernoulli(k, 0.3, (4,)))
    add("bernoulli array p", lambda k: r.bernoulli(k, jnp.array([0.2, 0.8], f32)))
    add("rademacher", lambda k: r.rademacher(k, (4,)))
    add("rademacher f32", lambda k: r.rademacher(k, (2, 2), f32))
    add("geometric", lambda k: r.geometric(k, 0.3, (4,)))
    add("categorical", lambda k: r.categorical(k, jnp.array([0.1, 0.5, 1.0], f32), shape=(4,)))
    add("categorical axis0",
        lambda k: r.categorical(k, jnp.arange(6, dtype=f32).reshape(3, 2), axis=0))
    add("categorical no replace",
        lambda k: r.categorical(k, jnp.array([0.1, 0.5, 1.0, 2.0], f32), shape=(2,),
                                replace=False))
    add("permutation", lambda k: r.permutation(k, 6))
    add("permutation array", lambda k: r.permutation(k, jnp.arange(6, dtype=f32).reshape(2, 3),
                                                     axis=1))
    add("permutation independent",
        lambda k: r.permutation(k, jnp.arange(6).reshape(2, 3), independent=True))
    add("choice", lambda k: r.choice(k, 5, (3,)))
    add("choice no replace", lambda k: r.choice(k, 5, (3,), replace=False))
    add("choice p", lambda k: r.choice(k, 4, (3,), p=jnp.array([0.1, 0.2, 0.3, 0.4], f32)))
    add("choice array", lambda k: r.choice(k, jnp.arange(8, dtype=f32).reshape(2, 4), (2,),
                                           axis=1))
    add("poisson", lambda k: r.poisson(k, 3.0, (3,)))
    add("poisson large", lambda k: r.poisson(k, 40.0, (2, 2)))
    add("poisson array", lambda k: r.poisson(k, jnp.array([0.0, 2.5, 12.0], f32)))
    add("poisson raw int16", lambda k: r.poisson(k, 5.0, (3,), jnp.int16), raw)
    add("binomial", lambda k: r.binomial(k, 10.0, 0.3, (3,)))
    add("binomial large", lambda k: r.binomial(k, jnp.array([5.0, 200.0], f32), 0.7))
    add("multinomial", lambda k: r.multinomial(k, 10.0, jnp.array([0.2, 0.3, 0.5], f32)))
    # continuous
    add("exponential", lambda k: r.exponential(k, (3,)))
    add("exponential f16", lambda k: r.exponential(k, (2,), f16))
    add("cauchy", lambda k: r.cauchy(k, (3,)))
    add("laplace", lambda k: r.laplace(k, (3,)))
    add("logistic", lambda k: r.logistic(k, (3,)))
    add("gumbel", lambda k: r.gumbel(k, (3,)))
    add("gumbel high", lambda k: r.gumbel(k, (3,), mode="high"))
    add("truncated_normal", lambda k: r.truncated_normal(k, -1.0, 2.0, (3,)))
    add("truncated_normal arrays",
        lambda k: r.truncated_normal(k, jnp.array([-1.0, 0.0], f32), 1.5))
    add("lognormal", lambda k: r.lognormal(k, 0.5, (3,)))
    add("pareto", lambda k: r.pareto(k, 2.0, (3,)))
    add("rayleigh", lambda k: r.rayleigh(k, 2.0, (3,)))
    add("weibull_min", lambda k: r.weibull_min(k, 1.5, 2.0, (3,)))
    add("maxwell", lambda k: r.maxwell(k, (3,)))
    add("double_sided_maxwell", lambda k: r.double_sided_maxwell(k, 1.0, 2.0, (3,)))
    add("wald", lambda k: r.wald(k, 1.5, (3,)))
    add("triangular", lambda k: r.triangular(k, 0.0, 0.3, 1.0, (3,)))
    add("multivariate_normal",
        lambda k: r.multivariate_normal(k, jnp.zeros(2, f32),
                                        jnp.array([[2.0, 0.5], [0.5, 1.0]], f32)))
    add("multivariate_normal svd",
        lambda k: r.multivariate_normal(k, jnp.ones(2, f32), jnp.eye(2, dtype=f32), (3,),
                                        method="svd"))
    add("orthogonal", lambda k: r.orthogonal(k, 3))
    add("orthogonal batched", lambda k: r.orthogonal(k, 2, (2,), m=3))
    add("ball", lambda k: r.ball(k, 3))
    add("ball p1", lambda k: r.ball(k, 2, 1.0, (2,)))
    # the gamma family
    add("gamma", lambda k: r.gamma(k, 2.0, (3,)))
    add("gamma small a", lambda k: r.gamma(k, jnp.array([0.3, 1.0, 4.0], f32)))
    add("gamma raw f16", lambda k: r.gamma(k, 1.5, (2,), f16), raw)
    add("loggamma", lambda k: r.loggamma(k, jnp.array([0.1, 2.0], f32)))
    add("beta", lambda k: r.beta(k, 2.0, 3.0, (3,)))
    add("dirichlet", lambda k: r.dirichlet(k, jnp.array([1.0, 2.0, 3.0], f32), (2,)))
    add("chisquare", lambda k: r.chisquare(k, 3.0, (3,)))
    add("f", lambda k: r.f(k, 2.0, 5.0, (3,)))
    add("t", lambda k: r.t(k, 4.0, (3,)))
    add("generalized_normal", lambda k: r.generalized_normal(k, 1.5, (3,)))
    # transformations
    add("grad gamma", lambda a: jax.grad(lambda a: r.gamma(k, a))(a), 2.0)
    add("grad gamma vector", lambda a: jax.grad(lambda a: r.gamma(k, a).sum())(a),
        jnp.array([0.5, 3.0], f32))
    add("grad loggamma", lambda a: jax.grad(lambda a: r.loggamma(k, a))(a), 0.7)
    add("grad beta", lambda a: jax.grad(lambda a: r.beta(k, a, 2.0))(a), 1.5)
    add("vmap normal", lambda ks: jax.vmap(lambda k: r.normal(k, (2,)))(ks), r.split(k, 3))
    add("vmap gamma", lambda ks: jax.vmap(lambda k: r.gamma(k, 2.5))(ks), r.split(k, 2))
    add("vmap poisson", lambda ks: jax.vmap(lambda k: r.poisson(k, 4.0, (2,)))(ks),
        r.split(k, 2))
    add("jit poisson", jax.jit(lambda k: r.poisson(k, 3.0, (3,))))
    # shape operations on key arrays (on their leading axes; the key data's trail along),
    # eager and jitted
    ks = r.split(k, 4)
    which = jnp.array([True, False, True, False])
    key_ops = [
        ("broadcast_to", lambda k: jnp.broadcast_to(k, (3,)), (k,)),
        ("reshape", lambda k: k.reshape(1), (k,)),
        ("reshape 2x2", lambda ks: ks.reshape(2, 2), (ks,)),
        ("stack", lambda a, b: jnp.stack([a, b]), (k, r.key(2))),
        ("split[None]", lambda k: r.split(k)[None], (k,)),
        ("expand_dims squeeze", lambda k: jnp.expand_dims(k, 0).squeeze(), (k,)),
        ("ravel of closed-over", lambda k: ks.reshape(2, 2).ravel(), (k,)),
        ("transpose", lambda ks: ks.reshape(2, 2).T, (ks,)),
        ("concatenate", lambda ks: jnp.concatenate([ks, ks[:1]]), (ks,)),
        ("index slice", lambda ks: (ks[1], ks[1:3], ks[::-1]), (ks,)),
        ("where", lambda ks: jnp.where(which, ks, ks[::-1]), (ks,)),
        ("tile repeat", lambda ks: (jnp.tile(ks, 2), jnp.repeat(ks, 2)), (ks,)),
        ("take", lambda ks: jnp.take(ks, jnp.array([0, 2])), (ks,)),
        ("take fill", lambda ks: jnp.take(ks, jnp.array([0, 7]), mode="fill"), (ks,)),
        ("roll moveaxis", lambda ks: (jnp.roll(ks, 1), jnp.moveaxis(ks.reshape(2, 2), 0, 1)),
         (ks,)),
        ("lax shape ops", lambda ks: (lax.broadcast_in_dim(ks, (2, 4), (1,)),
                                      lax.rev(ks, (0,)), lax.dynamic_slice(ks, (1,), (2,)),
                                      lax.dynamic_update_slice(ks, ks[:1], (2,))), (ks,)),
        ("zeros_like full_like", lambda ks: (jnp.zeros_like(ks), jnp.full_like(ks, ks[1])),
         (ks,)),
        ("at set", lambda ks: ks.at[1].set(ks[0]), (ks,)),
        ("vmap closing over a key", lambda x: jax.vmap(lambda i: r.split(r.fold_in(k, i))[None])(
            x), (jnp.arange(3),)),
        ("vmap reshape stack", jax.vmap(lambda a, b: jnp.stack([a, b.reshape(())])), (ks, ks)),
        ("scan keys out", lambda k: lax.scan(lambda c, _: (r.split(c)[0], c), k, None,
                                              length=3)[1], (k,)),
        ("map keys", lambda ks: lax.map(lambda c: jnp.broadcast_to(c, (2,)), ks), (ks,)),
        # JAX refuses a pad of keys when lowering it (MLIR's verifier: an hlo.pad of the key
        # data with the logical config), and any conversion to or from a key dtype
        ("lax.pad", lambda ks: lax.pad(ks, ks[0], [(1, 0, 0)]), (ks,)),
        ("lax.pad 2d", lambda ks: lax.pad(ks.reshape(2, 2), ks[0], [(1, 0, 0), (0, 2, 1)]),
         (ks,)),
        ("jnp.pad", lambda ks: jnp.pad(ks, 1), (ks,)),
        ("jnp.pad key value", lambda ks: jnp.pad(ks, 1, constant_values=ks[0]), (ks,)),
        ("jnp.pad edge wrap", lambda ks: (jnp.pad(ks, 1, mode="edge"),
                                          jnp.pad(ks, (0, 2), mode="wrap")), (ks,)),
        ("convert to key", lambda ks: lax.convert_element_type(0, ks.dtype), (ks,)),
        ("convert from key", lambda ks: lax.convert_element_type(ks, jnp.uint32), (ks,)),
        ("convert to own key dtype", lambda ks: lax.convert_element_type(ks, ks.dtype), (ks,)),
        ("asarray uint32", lambda ks: jnp.asarray(ks, jnp.uint32), (ks,)),
    ]
    for name, fn, args in key_ops:
        add(f"keys {name}", fn, *args)
        add(f"keys jit {name}", jax.jit(fn), *args)
    return out


def bits_of(np, jax, out):
    """A result as JSON: nested {dtype, shape, bits} with floats as unsigned ints of their
    width (complex: of the part's width) and keys as their key data."""
    if isinstance(out, (tuple, list)):
        return [bits_of(np, jax, o) for o in out]
    if jax.numpy.issubdtype(getattr(out, "dtype", None), jax.dtypes.prng_key):
        out = jax.random.key_data(out)
    a = np.asarray(out)
    dtype = a.dtype.name
    if a.dtype.kind in "fcV":  # V: bfloat16
        a = a.view(f"u{a.itemsize // 2 if a.dtype.kind == 'c' else a.itemsize}")
    return {"dtype": dtype, "shape": list(np.shape(out)), "bits": [int(v) for v in a.ravel()]}


if __name__ == "__main__":
    from jaxpr_recording import record_jaxprs_and_values
    record_jaxprs_and_values(cases, OUT, lambda out, np, jax: bits_of(np, jax, out))
