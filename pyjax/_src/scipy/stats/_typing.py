"""Type aliases for the stats signatures (one definition: pyjax._src.typing)."""
from pyjax._src.core.array import Array
from pyjax._src.typing import ArrayLike

__all__ = ["Array", "ArrayLike"]
