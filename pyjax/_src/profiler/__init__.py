"""`jax.profiler` on pyjax: trace sessions written as Chrome trace-event JSON (recorder.py,
session.py), annotations (annotations.py), a memory profile in pprof format (memory.py), the
trace reader (data.py) and the profiler server (server.py)."""
