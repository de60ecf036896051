"""`jax._src.dtypes`: pyjax's dtype lattice and utilities."""
from pyjax._src.core.dtypes import *  # noqa: F401,F403
from pyjax._src.core.dtypes import (  # noqa: F401
    TypePromotionError, bfloat16, canonicalize_dtype, extended, finfo, float0, iinfo,
    issubdtype, prng_key, result_type)
from pyjax._src.core.dtypes import ExtendedDType  # noqa: F401,E402
import numpy as _np  # noqa: E402

DType = _np.dtype  # JAX's annotation for a NumPy dtype
