"""What `import jax._src.X` gives under `pyjax.alias_as_jax()`: the handful of JAX-internal
modules that libraries reach into, each mapped onto pyjax.  A module absent here is absent
under the alias (ImportError), as it would be for any name pyjax does not provide."""

# JAX internals that are pyjax's own modules rather than mappings (see alias._SAME_MODULE):
# bound here so that `from jax._src import compiler` finds them too
from pyjax._src.backend import compiler  # noqa: F401,E402
from pyjax._src import checkify  # noqa: F401,E402
# JAX imports its backend registry with `import jax`, so `jax._src.xla_bridge._backends` is
# reachable without importing it (chex's fake.set_n_cpu_devices reads it so)
from pyjax._src.compat.jax_src import xla_bridge  # noqa: F401,E402
