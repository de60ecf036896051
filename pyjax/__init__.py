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
from pyjax import core  # noqa: F401,E402  (jax.core: pyjax/_src/compat/core.py)
from pyjax._src.api import (  # noqa: F401
    ShapeDtypeStruct, block_until_ready, clear_caches, device_get, device_put, eval_shape, typeof)
from pyjax._src.parallel.devices import (  # noqa: F401
    default_backend, device_count, devices, local_device_count, local_devices, process_count,
    process_index)
from pyjax._src.transforms.ad_api import (  # noqa: F401
    grad, hessian, jacfwd, jacobian, jacrev, jvp, linear_transpose, linearize, value_and_grad, vjp)
from pyjax._src.parallel.pmap import pmap  # noqa: F401
from pyjax._src.transforms.batching import vmap  # noqa: F401
from pyjax._src.transforms.checkpoint import checkpoint, checkpoint_policies, remat  # noqa: F401
from pyjax._src.transforms.custom_derivatives import (  # noqa: F401
    closure_convert, custom_gradient, custom_jvp, custom_vjp)
from pyjax._src.transforms.jit import jit  # noqa: F401
from pyjax._src.transforms.staging import make_jaxpr  # noqa: F401
from pyjax._src.alias import alias_as_jax  # noqa: F401
from pyjax._src.callback import pure_callback  # noqa: F401,E402
from pyjax import random  # noqa: F401,E402
from pyjax import dlpack  # noqa: F401,E402
from pyjax import flatten_util, typing  # noqa: F401,E402

# Sharding (issue 13): jax.sharding, and the names JAX also exports at top level.
from pyjax import sharding  # noqa: F401,E402
from pyjax._src.parallel.devices import Device  # noqa: F401,E402
from pyjax._src.parallel.mesh import make_mesh, set_mesh  # noqa: F401,E402
from pyjax._src.parallel.placement import (  # noqa: F401,E402
    make_array_from_callback, make_array_from_process_local_data,
    make_array_from_single_device_arrays, reshard)
from pyjax._src.parallel.sharding import NamedSharding, P, Shard  # noqa: F401,E402

# shard_map and multiple processes (issue 15): jax.shard_map, jax.distributed.
from pyjax._src.parallel.shard_map import shard_map  # noqa: F401,E402
from pyjax import distributed  # noqa: F401,E402

# Mutable array references (jax.new_ref, jax.Ref, jax.freeze, the jax.ref module).
from pyjax import ref  # noqa: F401,E402
from pyjax._src.state import Ref, freeze, new_ref  # noqa: F401,E402

# Small top-level functions and options (jax.ops, jax.image, jax.custom_batching load lazily,
# listed below): exact on one synchronous host process.
from pyjax._src.api_misc import (  # noqa: F401,E402
    copy_to_host_async, effects_barrier, process_indices)
from pyjax._src.config import jax2tf_associative_scan_reductions  # noqa: F401,E402

# Heavier user-facing packages load on first use (`pyjax.nn`, `pyjax.scipy`, `pyjax.debug`).
from pyjax._src import lazy_loader as _lazy  # noqa: E402

__getattr__ = _lazy.attach(__name__, ["api_util", "custom_batching", "custom_derivatives", "debug",
                                      "image", "interpreters", "nn", "ops", "scipy", "stages",
                                      "version"])[0]
del _lazy
