"""pyjax.dtypes: dtype utilities (re-exports only)."""
from pyjax._src.core.dtypes import (  # noqa: F401
    TypePromotionError, bfloat16, canonicalize_dtype, extended, finfo, float0, iinfo,
    issubdtype, itemsize_bits, prng_key, result_type, scalar_type_of)
