"""pyjax: JAX re-implemented in Python on NumPy.

    import pyjax as jax
    import pyjax.numpy as jnp
"""
__version__ = "0.10.2"
__version_info__ = (0, 10, 2)

import warnings as _warnings

# NumPy reports floating-point events (overflow, 0/0, inf-inf) as RuntimeWarnings; XLA computes
# the same inf/nan silently.  Only warnings raised from pyjax's own modules are silenced.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"pyjax\._src\.")

from pyjax._src.config import (  # noqa: F401
    config, default_prng_impl, disable_jit, enable_checks, enable_x64, ensure_compile_time_eval,
    numpy_rank_promotion, threefry_partitionable)
from pyjax._src.config import (  # noqa: F401  (options as context managers, issue 13)
    check_tracer_leaks, checking_leaks, debug_infs, debug_key_reuse, debug_nans, default_device,
    default_matmul_precision, enable_custom_prng, explain_cache_misses, legacy_prng_key,
    log_compiles, no_execution, no_tracing, numpy_dtype_promotion, softmax_custom_jvp,
    transfer_guard, transfer_guard_device_to_device, transfer_guard_device_to_host,
    transfer_guard_host_to_device)
from pyjax._src.api_extras import (  # noqa: F401
    live_arrays, named_call, named_scope, print_environment_info)
from pyjax._src.core.dtypes import float0  # noqa: F401
from pyjax._src.core.array import Array  # noqa: F401
from pyjax._src.numpy import array_methods as _array_methods  # noqa: F401  (installs methods)
from pyjax import dtypes, errors, lax, numpy, tree, tree_util  # noqa: F401
from pyjax._src.api import (  # noqa: F401
    ShapeDtypeStruct, block_until_ready, clear_caches, device_get, device_put, eval_shape, typeof)
from pyjax._src.parallel.devices import (  # noqa: F401
    default_backend, device_count, devices, local_device_count, local_devices, process_count,
    process_index)
from pyjax._src.transforms.ad_api import (  # noqa: F401
    grad, hessian, jacfwd, jacobian, jacrev, jvp, linear_transpose, linearize, value_and_grad, vjp)
from pyjax._src.transforms.batching import vmap  # noqa: F401
from pyjax._src.transforms.jit import jit  # noqa: F401
from pyjax._src.transforms.staging import make_jaxpr  # noqa: F401
from pyjax._src.config import jax2tf_associative_scan_reductions  # noqa: F401,E402
from pyjax._src.config import (  # noqa: F401,E402
    allow_f16_reductions, array_garbage_collection_guard, auto_pcast,
    remove_size_one_mesh_axis_from_type, thread_guard)

# Everything else loads on first use (PEP 562), so `import pyjax` stays within a fraction of a
# second of `import numpy` (issue 16): the heavier user-facing packages (`pyjax.nn`,
# `pyjax.scipy`, `pyjax.random`, ...) and the names below, each from its defining module.
from pyjax._src import lazy_loader as _lazy  # noqa: E402

_LAZY_ATTRIBUTES = {
    # jax.core (pyjax/_src/compat/core.py), the alias, callbacks, remat
    "core": "pyjax.core", "alias_as_jax": "pyjax._src.alias:alias_as_jax",
    "pure_callback": "pyjax._src.callback:pure_callback",
    **{n: f"pyjax._src.transforms.checkpoint:{n}"
       for n in ("checkpoint", "checkpoint_policies", "remat")},
    **{n: f"pyjax._src.transforms.custom_derivatives:{n}"
       for n in ("closure_convert", "custom_gradient", "custom_jvp", "custom_vjp")},
    # sharding (issue 13) and multiple processes (issue 15)
    "pmap": "pyjax._src.parallel.pmap:pmap", "Device": "pyjax._src.parallel.devices:Device",
    "make_mesh": "pyjax._src.parallel.mesh:make_mesh",
    "memory": "pyjax._src.memory:memory",
    "set_mesh": "pyjax._src.parallel.mesh:set_mesh",
    **{n: f"pyjax._src.parallel.placement:{n}"
       for n in ("make_array_from_callback", "make_array_from_process_local_data",
                 "make_array_from_single_device_arrays")},
    "reshard": "pyjax._src.parallel.reshard:reshard",
    **{n: f"pyjax._src.parallel.sharding:{n}" for n in ("NamedSharding", "P", "Shard")},
    "shard_map": "pyjax._src.parallel.shard_map:shard_map",
    # mutable array references (jax.new_ref, jax.Ref, jax.freeze, the jax.ref module)
    **{n: f"pyjax._src.state:{n}" for n in ("Ref", "freeze", "new_ref")},
    # small top-level functions, exact on one synchronous host process
    **{n: f"pyjax._src.api_misc:{n}"
       for n in ("copy_to_host_async", "effects_barrier", "process_indices")},
    # JAX 0.10.2's newer top-level names
    "make_user_context": "pyjax._src.user_context:make_user_context",
    "fwd_and_bwd": "pyjax._src.fwd_and_bwd:fwd_and_bwd",
    "smap": "pyjax._src.parallel.smap:smap",
    **{n: f"pyjax._src.state.lifetime:{n}" for n in ("empty_ref", "free_ref")},
    "ds": "pyjax._src.dslice:ds",
    "ad": "pyjax._src.transforms.ad_api:markers",  # (VJP.with_refs's markers)
}
_LAZY_SUBMODULES = [
    "api_util", "custom_batching", "custom_derivatives", "debug", "image", "interpreters",
    "monitoring", "nn", "ops", "profiler", "scipy", "stages", "version"]
_DEFERRED_SUBMODULES = [  # imported by `import pyjax` before issue 16
    "distributed", "dlpack", "flatten_util", "random", "ref", "sharding", "typing"]
_DEFERRED = [*_DEFERRED_SUBMODULES, *_LAZY_ATTRIBUTES]  # what lazy_loader.load_deferred loads
__getattr__, __dir__, _ = _lazy.attach(
    __name__, [*_LAZY_SUBMODULES, *_DEFERRED_SUBMODULES], _LAZY_ATTRIBUTES)
# `from pyjax import *` takes what it took before issue 16 (the always-lazy packages excluded)
__all__ = _lazy.public_names(globals(), _DEFERRED)
del _lazy, _
