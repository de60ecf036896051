"""Record what JAX 0.10.2's `jax.monitoring` reports: the listener calls (kind, event, keyword
arguments) of a few jit scenarios and of direct record_* calls, and how the registry behaves
(clear_event_listeners, unregistering), into tests/data/monitoring.json.

    /work/oracle/bin/python tests/oracle/record_monitoring.py

Timings are not recorded (they differ run to run), only which calls came, in order.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "monitoring.json")


def scenarios(jax, jnp):
    """name -> thunk; each runs with fresh listeners (functions are made inside)."""
    def jit_twice():
        def f(x):
            return jnp.sin(x) * 2
        jf = jax.jit(f)
        jf(1.0)
        jf(1.0)

    def nested():
        def f(x):
            return jnp.sin(x) * 2

        def g(x):
            return jax.jit(f)(x) + 1
        jax.jit(g)(2.0)

    def lambda_fn():
        jax.jit(lambda x: x + 1)(2.0)

    def static_args():
        def h(x, n):
            return x * n
        jh = jax.jit(h, static_argnums=1)
        jh(1.0, 2)
        jh(1.0, 3)
        jh(2.0, 2)

    def direct():
        m = jax.monitoring
        m.record_event("/my/event", a=1, b="x")
        m.record_event_duration_secs("/my/duration", 0.5, a=2)
        m.record_event_time_span("/my/span", 1.0, 2.5, c=3)
        m.record_scalar("/my/scalar", 7, d=4)

    return {"jit_twice": jit_twice, "nested": nested, "lambda_fn": lambda_fn,
            "static_args": static_args, "direct": direct}


def listen(m, log):
    """Register one listener of each kind appending (kind, event, value, kwargs) to log."""
    ls = (lambda e, **k: log.append(["event", e, None, k]),
          lambda e, d, **k: log.append(["duration", e, d if e.startswith("/my/") else None, k]),
          lambda e, s, t, **k: log.append(["span", e, [s, t] if e.startswith("/my/") else None,
                                           k]),
          lambda e, v, **k: log.append(["scalar", e, v if e.startswith("/my/") else None, k]))
    m.register_event_listener(ls[0])
    m.register_event_duration_secs_listener(ls[1])
    m.register_event_time_span_listener(ls[2])
    m.register_scalar_listener(ls[3])
    return ls


def registry_behaviour(m):
    """What clear/unregister do."""
    out = {}
    m.clear_event_listeners()
    for unreg in ("unregister_event_listener", "unregister_scalar_listener"):
        m.clear_event_listeners()
        try:
            getattr(m, unreg)(print)
            out[unreg] = "ok"
        except Exception as e:  # noqa: BLE001
            out[unreg] = type(e).__name__
    log = []
    scalar = listen(m, log)[3]
    m.clear_event_listeners()
    m.record_event("/e")
    m.record_event_duration_secs("/e", 1.0)
    m.record_event_time_span("/e", 1.0, 2.0)
    m.record_scalar("/e", 1.0)
    out["after_clear"] = [entry[0] for entry in log]
    m.unregister_scalar_listener(scalar)
    return out


def record(jax, jnp):
    from jax import monitoring as m
    result = {"scenarios": {}}
    for name, thunk in scenarios(jax, jnp).items():
        log = []
        ls = listen(m, log)
        thunk()
        m.unregister_event_listener(ls[0])
        m.unregister_event_duration_listener(ls[1])
        m.unregister_event_time_span_listener(ls[2])
        m.unregister_scalar_listener(ls[3])
        result["scenarios"][name] = log
    result["registry"] = registry_behaviour(m)
    result["names"] = sorted(n for n in dir(m) if not n.startswith("_"))
    return result


if __name__ == "__main__":
    import jax
    import jax.numpy as jnp
    data = {"jax_version": jax.__version__, **record(jax, jnp)}
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    print(f"wrote {OUT}", file=sys.stderr)
