"""`jax.thread_guard`: while a thread has it set, a collective that crosses processes
(parallel/distributed.py's process-level primitives, run over MPI) called from any other thread
is an error, as in JAX.  Threads issuing such collectives in different orders in different
processes would otherwise deadlock or mismatch."""
from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
#: the thread that set the guard (threading.get_ident()), or None while no thread has
guard_thread: int | None = None


def on_change(old: Any, new: Any, local: bool) -> None:
    """The option changed: a thread's override (JAX's guard is thread-local: its process-wide
    value sets nothing) sets the guard to that thread, or clears it."""
    global guard_thread
    if not local:
        return
    me = threading.get_ident()
    with _lock:
        if new is True:
            if guard_thread is not None and guard_thread != me:
                raise RuntimeError("The thread guard's global thread ID is already set. Nested "
                                   "thread guards in different threads are not supported.")
            guard_thread = me
        else:
            guard_thread = None


def check() -> None:
    """Raise if the guard is set by a thread other than this one (called by every collective
    that crosses processes)."""
    owner = guard_thread
    if owner is not None and owner != threading.get_ident():
        raise RuntimeError(f"A multi-process JAX operation was called from thread "
                           f"{threading.get_ident()}. This is not allowed because the thread "
                           f"guard was set in thread {owner}.")
