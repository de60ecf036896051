"""pyjax.experimental.layout (JAX's `jax.experimental.layout`): re-exports only."""
from pyjax._src.layout import Format, Layout, with_layout_constraint  # noqa: F401
