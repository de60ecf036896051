"""pyjax.scipy.spatial: the transform submodule, loaded on first use."""
from pyjax._src import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach(__name__, ["transform"])
del _lazy
