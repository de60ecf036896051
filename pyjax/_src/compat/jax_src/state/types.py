"""`jax._src.state.types`: the abstract type of a mutable array reference."""
from pyjax._src.state.types import AbstractRef, TransformedRef  # noqa: F401
