"""jax.experimental.shard_map: the deprecated spelling of jax.shard_map (warns on use)."""
import warnings as _warnings
from typing import Any, Callable


def _legacy_shard_map(f: Callable, mesh: Any, in_specs: Any, out_specs: Any,
                      check_rep: bool = True) -> Callable:
    """Please use `jax.shard_map`.  `jax.experimental.shard_map.shard_map` has been
    deprecated."""
    from pyjax._src.parallel.shard_map import shard_map
    return shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=check_rep)


def __getattr__(name: str) -> Any:
    if name == "shard_map":
        _warnings.warn("jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map "
                       "instead.", DeprecationWarning, stacklevel=2)
        return _legacy_shard_map
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
