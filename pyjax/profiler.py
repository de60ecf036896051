"""pyjax.profiler (JAX's `jax.profiler`).  Traces are written as Chrome trace-event JSON
(loadable by Perfetto and TensorBoard's trace viewer) where JAX writes XLA's XPlane: see
pyjax/_src/profiler/."""
from pyjax._src.profiler.annotations import (  # noqa: F401
    StepTraceAnnotation, TraceAnnotation, annotate_function)
from pyjax._src.profiler.data import ProfileData, ProfileEvent, ProfilePlane  # noqa: F401
from pyjax._src.profiler.memory import (  # noqa: F401
    device_memory_profile, save_device_memory_profile)
from pyjax._src.profiler.server import (  # noqa: F401
    register_subprocess, start_server, stop_server)
from pyjax._src.profiler.session import (  # noqa: F401
    ProfileOptions, start_trace, stop_trace, trace)
