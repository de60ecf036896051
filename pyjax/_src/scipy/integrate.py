"""jax.scipy.integrate: trapezoid, jnp.trapezoid's rule under its own jit (as JAX stages it)."""
from __future__ import annotations

from typing import Any

from pyjax._src.numpy import signal as jnp_signal
from pyjax._src.transforms.jit import jit


@jit(static_argnames=("axis",))
def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of sampled y along `axis` by the trapezoidal rule (spacing x, or dx)."""
    return jnp_signal.trapezoid(y, x, dx, axis)
