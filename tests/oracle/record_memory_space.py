"""Record what JAX 0.10.2 shows of memory spaces on CPU (`jax.memory.Space`, avals'
`memory_space` printed `f32<host>[4]`, device_put to a 'pinned_host' sharding, references
made with a memory space) into tests/data/memory_space.json:

    /work/oracle/bin/python tests/oracle/record_memory_space.py

`run_all(jax, jnp, lax, np)` is shared with tests/test_memory_space.py, which runs the same
cases under pyjax.  Each record is repr() of the result or the error's class name and message.
"""
import os

from jaxpr_recording import record_in_children, repr_or_error, thunk_case_list

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "memory_space.json")


def cases(jax, jnp, lax, np):
    """[(name, thunk)]."""
    from jax.sharding import SingleDeviceSharding
    S = jax.memory.Space
    dev = jax.devices()[0]
    x = jnp.arange(4.0)
    out, add = thunk_case_list()

    def on(kind):
        return SingleDeviceSharding(dev, memory_kind=kind)

    add("members", lambda: (list(S), [m.name for m in S], [m.value for m in S]))
    add("lookup", lambda: (S["Host"] is S.Host, S(2) is S.Host, S.Device == S.Device,
                           S.Device != S.Host, str(S.Any)))
    add("aval_default", lambda: jax.typeof(x).memory_space)
    add("aval_update", lambda: [str(jax.typeof(x).update(memory_space=m)) for m in S])
    add("aval_update_repr", lambda: repr(jax.typeof(x).update(memory_space=S.Host)))
    add("aval_update_eq", lambda: (jax.typeof(x).update(memory_space=S.Host) == jax.typeof(x),
                                   jax.typeof(x).update(memory_space=S.Device) == jax.typeof(x),
                                   jax.typeof(x).update(memory_space=S.Host)
                                   == jax.typeof(x).update(memory_space=S.Host)))
    add("shaped_array", lambda: str(jax.core.ShapedArray((2, 3), jnp.int32,
                                                         memory_space=S.Host)))
    for kind in ("pinned_host", "unpinned_host", "device"):
        add(f"put_{kind}", lambda kind=kind: (
            str(jax.typeof(jax.device_put(x, on(kind)))),
            jax.device_put(x, on(kind)).sharding.memory_kind,
            np.asarray(jax.device_put(x, on(kind))).tolist()))
        add(f"jaxpr_put_{kind}", lambda kind=kind: str(jax.make_jaxpr(
            lambda a: (jax.device_put(a, on(kind)) * 2, jnp.sin(jax.device_put(a, on(kind)))
                       .sum()))(x)))
    add("jaxpr_host_arg", lambda: str(jax.make_jaxpr(lambda a: a + 1)(
        jax.device_put(x, on("pinned_host")))))
    add("host_value", lambda: np.asarray(jax.jit(lambda a: a * 3)(
        jax.device_put(x, on("pinned_host")))).tolist())
    # one jitted function called on device arrays, then host ones: the memory space keys
    # its traces (the cached call's signature included)
    def typed_results(fn, *calls):
        f = jax.jit(fn)
        return [(str(jax.typeof(out)), out.sharding.memory_kind)
                for out in (f(*args) for args in calls)]

    host = lambda: jax.device_put(x, on("pinned_host"))  # noqa: E731
    add("jit_device_then_host", lambda: typed_results(lambda a: a * 2, (x,), (host(),), (x,)))
    add("jit_host_then_device", lambda: typed_results(jnp.sin, (host(),), (x,), (host(),)))
    add("jit_two_args", lambda: typed_results(lambda a, b: a * 2 + b, (x, x), (host(), host())))
    add("jit_mixed_spaces", lambda: typed_results(lambda a, b: a * 2 + b, (x, x), (x, host())))
    add("jaxpr_new_ref", lambda: str(jax.make_jaxpr(
        lambda a: jax.new_ref(a, memory_space=S.Host)[...])(x)))
    add("new_ref_eager", lambda: jax.new_ref(x, memory_space=S.Host))
    return out


def run_all(jax, jnp, lax, np):
    return {name: repr_or_error(thunk) for name, thunk in cases(jax, jnp, lax, np)}


def main() -> None:
    record_in_children(__file__, run_all, OUT, [("records", 1)])  # one device, as the tests run


if __name__ == "__main__":
    main()
