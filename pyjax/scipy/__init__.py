"""`jax.scipy`: SciPy's API on pyjax arrays; each submodule loads on first use."""
from pyjax._src import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach(__name__, [
    "cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal",
    "sparse", "spatial", "special", "stats"])
del _lazy
