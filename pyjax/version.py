"""pyjax.version (JAX's `jax.version`): the version JAX reports, which pyjax matches."""
from pyjax import __version__, __version_info__  # noqa: F401

_version = __version__
