"""The persistent cache of tier 1's native code: the object file MCJIT generated for a kernel,
on disk under `jax_compilation_cache_dir`, so a fresh process loads it instead of compiling.

The key is the sha256 of the kernel's IR and of everything else that shapes its machine code
(target triple, CPU name and features, llvmlite and LLVM versions, pyjax's version, the
pipeline's settings: `engine` passes them as `host`).  An entry is one file named by its key:

    MAGIC (8 bytes) | key (32 bytes) | payload length (8 bytes, little endian) |
    sha256 of the payload (32 bytes) | payload (an ELF object file)

Entries are written to a temporary file and renamed into place, so a reader never sees half of
one; a file that is short, long, from another key or another format, or whose payload does
not hash to its header, is deleted and its kernel compiled again.  Nothing is unpickled.  As in
JAX, the cache is trusted code: whoever can write valid entries in the directory can run code.

Options, as in JAX: `jax_compilation_cache_dir` (None: no disk cache), fixed at first use until
`reset_cache()`; `jax_enable_compilation_cache`; `jax_persistent_cache_min_compile_time_secs`
and `jax_persistent_cache_min_entry_size_bytes` (smaller or faster entries are not written);
`jax_raise_persistent_cache_errors` (I/O errors raise instead of warning).
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import struct
import tempfile
import threading
import time
import warnings
from typing import Any

from pyjax._src import monitoring
from pyjax._src.config import config

logger = logging.getLogger(__name__)

MAGIC = b"PYJXOBJ1"
_HEADER = struct.Struct("<8s32sQ32s")
_ELF = b"\x7fELF"
_SUFFIX = "-tier1"

_lock = threading.Lock()
_directory: str | None = None  # the directory in use, once the cache was first used
_stats = dict.fromkeys(("hits", "misses", "rejected", "writes", "skipped"), 0)


def key(ir: str, host: str) -> str:
    """The entry's name: sha256 (hex) of the kernel's IR and the host/toolchain description."""
    digest = hashlib.sha256()
    for part in (host, ir):
        data = part.encode()
        digest.update(struct.pack("<Q", len(data)))
        digest.update(data)
    return digest.hexdigest()


def directory() -> str | None:
    """The cache directory in use, or None when the disk cache is off.  As in JAX, the first
    use fixes the directory; later changes of the option apply after `reset_cache()`."""
    global _directory
    if not config.enable_compilation_cache:
        return None
    with _lock:
        if _directory is None:
            path = config.compilation_cache_dir
            if not path:
                return None
            _directory = path
            logger.debug("Initialized persistent compilation cache at %s", _directory)
        return _directory


def set_cache_dir(path: Any) -> None:
    """Set the persistent compilation cache directory (the option `jax_compilation_cache_dir`):
    native kernels compiled from now on are saved there and loaded from there by later runs.
    The cache is trusted: anyone who can write to `path` can make this process run code."""
    config.update("jax_compilation_cache_dir", path)


def reset_cache() -> None:
    """Back to the uninitialised state: the next kernel reads `jax_compilation_cache_dir`
    again."""
    global _directory
    with _lock:
        _directory = None


def statistics() -> dict[str, int]:
    """Counts since the process started: entries loaded (`hits`), looked for and absent
    (`misses`), found bad and deleted (`rejected`), written (`writes`), and not written because
    below the size or compile-time thresholds (`skipped`)."""
    with _lock:
        return dict(_stats)


def _count(what: str) -> None:
    with _lock:
        _stats[what] += 1


def _path(root: str, name: str) -> str:
    return os.path.join(root, name + _SUFFIX)


def _cache_error(action: str, name: str, error: Exception) -> None:
    """An I/O error: raised under `jax_raise_persistent_cache_errors`, else a warning."""
    if config.raise_persistent_cache_errors:
        raise error
    warnings.warn(f"Error {action} persistent compilation cache entry for '{name}': "
                  f"{type(error).__name__}: {error}", RuntimeWarning, stacklevel=3)


def _payload(data: bytes, name: str) -> bytes | None:
    """The verified payload of entry file contents `data`, or None if it is not a good entry
    for key `name`."""
    if len(data) < _HEADER.size:
        return None
    magic, key_bytes, length, digest = _HEADER.unpack_from(data)
    payload = data[_HEADER.size:]
    if (magic != MAGIC or key_bytes != bytes.fromhex(name) or length != len(payload)
            or hashlib.sha256(payload).digest() != digest or not payload.startswith(_ELF)):
        return None
    return payload


def load(name: str) -> bytes | None:
    """The object code stored under key `name`, or None (no cache, no entry, or a bad entry,
    which is deleted)."""
    root = directory()
    if root is None:
        return None
    watched = monitoring.active()  # JAX's cache events (jax.monitoring), per native kernel
    if watched:
        monitoring.record_event("/jax/compilation_cache/compile_requests_use_cache")
        started = time.monotonic()
    path = _path(root, name)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        _count("misses")
        return None
    except OSError as e:
        _cache_error("reading", name, e)
        return None
    payload = _payload(data, name)
    if payload is None:
        _count("rejected")
        logger.log(_miss_priority(), "Deleting bad persistent compilation cache entry %s", path)
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
        except OSError as e:
            _cache_error("deleting", name, e)
        return None
    _count("hits")
    if watched:
        monitoring.record_event("/jax/compilation_cache/cache_hits")
        monitoring.record_event_duration_secs("/jax/compilation_cache/cache_retrieval_time_sec",
                                              time.monotonic() - started)
    logger.log(logging.WARNING if config.log_compiles else logging.DEBUG,
               "Persistent compilation cache hit for native kernel with key %r", name)
    return payload


def store(name: str, payload: bytes, compile_secs: float) -> bool:
    """Write `payload` (object code that took `compile_secs` to build) under key `name`, unless
    the cache is off or the entry is below the thresholds.  True when it was written."""
    root = directory()
    if root is None:
        return False
    entry = _HEADER.pack(MAGIC, bytes.fromhex(name), len(payload),
                         hashlib.sha256(payload).digest()) + payload
    min_secs = config.persistent_cache_min_compile_time_secs
    min_size = config.persistent_cache_min_entry_size_bytes
    if compile_secs < min_secs or len(entry) < min_size:
        _count("skipped")
        logger.log(_miss_priority(), "Not writing persistent cache entry %r: %.3f s to compile "
                   "(at least %.2f s needed), %d bytes (at least %d needed)", name,
                   compile_secs, min_secs, len(entry), min_size)
        return False
    monitoring.record_event("/jax/compilation_cache/cache_misses")  # (as JAX: before writing)
    try:
        os.makedirs(root, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{name}-", suffix=".tmp", dir=root)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(entry)
            os.replace(temporary, _path(root, name))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as e:
        _cache_error("writing", name, e)
        return False
    _count("writes")
    logger.debug("Wrote native kernel to persistent compilation cache with key %r", name)
    return True


def _miss_priority() -> int:
    return logging.WARNING if config.explain_cache_misses else logging.DEBUG
