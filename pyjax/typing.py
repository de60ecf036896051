"""`jax.typing`: annotations for array-like and dtype-like arguments."""
from pyjax._src.typing import ArrayLike, DTypeLike  # noqa: F401
