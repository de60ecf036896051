"""jax.image: image resampling (resize, scale_and_translate, ResizeMethod)."""
from pyjax._src.image.scale import (  # noqa: F401
    ResizeMethod as ResizeMethod, resize as resize, scale_and_translate as scale_and_translate)
