"""`jax._src.state`: JAX's mutable array references, as pyjax implements them."""
from pyjax._src.state import AbstractRef, TransformedRef  # noqa: F401
