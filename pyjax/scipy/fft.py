"""pyjax.scipy.fft: the type-2 discrete cosine transforms (re-exports)."""
from pyjax._src.scipy.fft import dct, dctn, idct, idctn  # noqa: F401
