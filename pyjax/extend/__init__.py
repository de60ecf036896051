"""pyjax.extend (JAX's `jax.extend`): the extension API libraries define primitives and
transformations with, mapped onto pyjax's core in pyjax/_src/compat/."""
from pyjax.extend import backend, core, linear_util, source_info_util  # noqa: F401
