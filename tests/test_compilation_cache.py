"""The persistent compilation cache of tier 1's native code (tier1/disk_cache.py): a second
process loads kernels from disk instead of compiling them, bad entries (truncated, corrupt,
foreign) are deleted and recompiled, and JAX's options decide what is written where."""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.backend import tier0, tier1
from pyjax._src.backend.tier1 import disk_cache, engine
from pyjax.experimental.compilation_cache import compilation_cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_REASON = tier1.reason()
needs_tier1 = pytest.mark.skipif(_REASON is not None, reason=f"tier 1 unavailable: {_REASON}")

_OPTIONS = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
            "jax_persistent_cache_min_entry_size_bytes", "jax_enable_compilation_cache",
            "jax_raise_persistent_cache_errors")


@pytest.fixture
def cache_dir(tmp_path):
    """A fresh cache directory in use, everything written (no compile-time threshold)."""
    saved = {name: pyjax.config.read(name) for name in _OPTIONS}
    disk_cache.reset_cache()
    compilation_cache.set_cache_dir(str(tmp_path / "cache"))
    pyjax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    try:
        yield tmp_path / "cache"
    finally:
        for name, value in saved.items():
            pyjax.config.update(name, value)
        disk_cache.reset_cache()


def _entries(directory) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.endswith("-tier1")) \
        if os.path.isdir(directory) else []


# ---------------------------------------------------------------------------------------------
# a second process
# ---------------------------------------------------------------------------------------------

_SCRIPT = """
import json, sys
import numpy as np
import pyjax, pyjax.numpy as jnp
from pyjax._src.backend import tier0, tier1
from pyjax._src.backend.tier1 import disk_cache, engine

tier0.BLOCKWISE_MIN = 1
pyjax.config.update("jax_compile_sync", True)
x = np.random.default_rng(0).standard_normal((64, 1000)).astype(np.float32)
functions = {
    "selu": lambda x: 1.0507 * jnp.where(x > 0, x, 1.67326 * jnp.exp(x) - 1.67326),
    "softmax": lambda x: pyjax.nn.softmax(x, axis=-1),
    "tanh_sum": lambda x: jnp.sum(jnp.tanh(x * 0.5 + 0.1) ** 2),
}
outs = {name: np.asarray(pyjax.jit(f)(x)) for name, f in functions.items()}
np.savez(sys.argv[1], **outs)
tier1.wait()  # (kernels run quick code first, then compile optimised: that is written)
print(json.dumps({**engine.counts(), **disk_cache.statistics()}))
"""


def _process(directory, outputs) -> tuple[dict, dict]:
    """Run `_SCRIPT` in a fresh interpreter whose cache directory is `directory` (given, as
    JAX allows, by environment variables): its counts, and its results."""
    env = dict(os.environ, JAX_COMPILATION_CACHE_DIR=str(directory),
               JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(outputs)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    with np.load(outputs) as f:
        return json.loads(done.stdout.strip().splitlines()[-1]), dict(f)


def _assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].dtype == b[name].dtype
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


@needs_tier1
def test_second_process_loads_kernels_from_disk(tmp_path):
    directory = tmp_path / "cache"
    first, compiled = _process(directory, tmp_path / "first.npz")
    n = first["compiled"]
    assert n >= 3 and first["loaded"] == 0 and first["quick"] == 3
    assert first["writes"] == n and first["misses"] == n and first["hits"] == 0
    assert len(_entries(directory)) == n
    second, loaded = _process(directory, tmp_path / "second.npz")
    assert second["compiled"] == 0 and second["loaded"] == n and second["quick"] == 0
    assert second["hits"] == n and second["writes"] == 0 and second["rejected"] == 0
    _assert_same(loaded, compiled)  # optimised code from disk: the quick code's bits


def _truncate(data: bytes) -> bytes:
    return data[:len(data) // 2]


def _flip_payload_byte(data: bytes) -> bytes:
    i = len(data) - 7
    return data[:i] + bytes([data[i] ^ 0x40]) + data[i + 1:]


def _append(data: bytes) -> bytes:
    return data + b"\0" * 16


def _other_magic(data: bytes) -> bytes:
    return b"PYJXOBJ0" + data[8:]


_DAMAGE = (_truncate, _flip_payload_byte, _append, _other_magic, lambda data: b"")


@needs_tier1
def test_bad_entries_are_recompiled_and_replaced(tmp_path):
    directory = tmp_path / "cache"
    _, compiled = _process(directory, tmp_path / "first.npz")
    names = _entries(directory)
    contents = {name: (directory / name).read_bytes() for name in names}
    # damage every entry, each in one way; the last one holds another key's (good) entry
    for name, damage in zip(names[:-1], itertools.cycle(_DAMAGE)):
        (directory / name).write_bytes(damage(contents[name]))
    (directory / names[-1]).write_bytes(contents[names[0]])
    second, recompiled = _process(directory, tmp_path / "second.npz")
    n = len(names)
    assert second["rejected"] == n and second["hits"] == 0 and second["loaded"] == 0
    assert second["compiled"] == n and second["writes"] == n
    _assert_same(recompiled, compiled)
    assert {name: (directory / name).read_bytes() for name in names} == contents
    third, loaded = _process(directory, tmp_path / "third.npz")
    assert third["loaded"] == n and third["compiled"] == 0 and third["rejected"] == 0
    _assert_same(loaded, compiled)


# ---------------------------------------------------------------------------------------------
# entries, without compiling
# ---------------------------------------------------------------------------------------------

_OBJECT = b"\x7fELF" + bytes(range(256)) * 8


def _key(text: str) -> str:
    return disk_cache.key(text, "a host")


def test_key_depends_on_ir_and_host():
    assert _key("ir") == disk_cache.key("ir", "a host")
    assert len({_key("ir"), _key("ir2"), disk_cache.key("ir", "another host"),
                disk_cache.key("", "a hostir")}) == 4


@pytest.mark.parametrize("damage", [*_DAMAGE, "foreign", "not an object"])
def test_a_bad_entry_is_deleted_never_returned(cache_dir, damage):
    name = _key(f"kernel {damage}")
    assert disk_cache.store(name, _OBJECT, 0.5)
    path = cache_dir / (name + "-tier1")
    assert disk_cache.load(name) == _OBJECT
    if damage == "foreign":  # a good entry of another kernel under this kernel's name
        other = _key("another kernel")
        assert disk_cache.store(other, _OBJECT, 0.5)
        path.write_bytes((cache_dir / (other + "-tier1")).read_bytes())
    elif damage == "not an object":  # a well-formed entry whose payload is no object file
        payload = b"#!/bin/sh" + _OBJECT
        head = (disk_cache.MAGIC + bytes.fromhex(name) + len(payload).to_bytes(8, "little")
                + hashlib.sha256(payload).digest())
        path.write_bytes(head + payload)
    else:
        path.write_bytes(damage(path.read_bytes()))
    before = disk_cache.statistics()
    assert disk_cache.load(name) is None
    assert not path.exists()
    assert disk_cache.statistics()["rejected"] == before["rejected"] + 1
    assert disk_cache.load(name) is None  # now simply absent
    assert disk_cache.statistics()["misses"] == before["misses"] + 1


def test_entries_are_written_whole(cache_dir):
    name = _key("whole")
    assert disk_cache.store(name, _OBJECT, 0.5)
    assert os.listdir(cache_dir) == [name + "-tier1"]  # no temporary file left behind
    assert (cache_dir / (name + "-tier1")).read_bytes().startswith(disk_cache.MAGIC)


def test_thresholds_decide_what_is_written(cache_dir):
    pyjax.config.update("jax_persistent_cache_min_compile_time_secs", 0.25)
    before = disk_cache.statistics()["skipped"]
    assert not disk_cache.store(_key("fast"), _OBJECT, 0.2)
    assert disk_cache.store(_key("slow"), _OBJECT, 0.25)
    pyjax.config.update("jax_persistent_cache_min_entry_size_bytes", 100_000)
    assert not disk_cache.store(_key("small"), _OBJECT, 1.0)
    pyjax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    assert disk_cache.store(_key("any size"), _OBJECT, 1.0)
    assert disk_cache.statistics()["skipped"] == before + 2
    assert _entries(cache_dir) == sorted(_key(k) + "-tier1" for k in ("slow", "any size"))


def test_io_errors_warn_or_raise(cache_dir):
    cache_dir.parent.mkdir(parents=True, exist_ok=True)
    cache_dir.write_bytes(b"a file where the directory should be")
    with pytest.warns(RuntimeWarning, match="Error writing persistent compilation cache entry"):
        assert not disk_cache.store(_key("nowhere"), _OBJECT, 1.0)
    pyjax.config.update("jax_raise_persistent_cache_errors", True)
    with pytest.raises(OSError):
        disk_cache.store(_key("nowhere"), _OBJECT, 1.0)


def test_directory_is_fixed_until_reset(cache_dir, tmp_path):
    assert disk_cache.store(_key("first"), _OBJECT, 1.0)
    compilation_cache.set_cache_dir(str(tmp_path / "other"))
    assert disk_cache.store(_key("second"), _OBJECT, 1.0)  # as in JAX: still the first one
    assert len(_entries(cache_dir)) == 2 and not (tmp_path / "other").exists()
    compilation_cache.reset_cache()
    assert disk_cache.store(_key("third"), _OBJECT, 1.0)
    assert _entries(tmp_path / "other") == [_key("third") + "-tier1"]


def test_disabled_cache_reads_and_writes_nothing(cache_dir):
    pyjax.config.update("jax_enable_compilation_cache", False)
    assert disk_cache.directory() is None
    assert not disk_cache.store(_key("off"), _OBJECT, 1.0)
    assert disk_cache.load(_key("off")) is None
    assert not cache_dir.exists()


def test_no_directory_no_cache(cache_dir):
    compilation_cache.set_cache_dir(None)
    compilation_cache.reset_cache()
    assert disk_cache.directory() is None
    assert not disk_cache.store(_key("none"), _OBJECT, 1.0)


@pytest.mark.parametrize("name, value, message", [
    ("jax_compilation_cache_dir", 3, "new string config value must be None or of type str, "
     "got 3 of type <class 'int'>."),
    ("jax_persistent_cache_min_compile_time_secs", "1",
     "new float config value must be None or of type float, got 1 of type <class 'str'>"),
    ("jax_persistent_cache_min_entry_size_bytes", 1.5,
     "new int config value must be None or of type int, got 1.5 of type <class 'float'>"),
])
def test_options_are_type_checked_as_in_jax(cache_dir, name, value, message):
    with pytest.raises(ValueError) as e:
        pyjax.config.update(name, value)
    assert str(e.value) == message


def test_options_from_the_environment():
    env = dict(os.environ, JAX_COMPILATION_CACHE_DIR="/somewhere",
               JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0.5",
               JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="-1", JAX_ENABLE_COMPILATION_CACHE="0")
    script = ("import pyjax; c = pyjax.config; print(c.jax_compilation_cache_dir, "
              "c.jax_persistent_cache_min_compile_time_secs, "
              "c.jax_persistent_cache_min_entry_size_bytes, c.jax_enable_compilation_cache)")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["/somewhere", "0.5", "-1", "False"], done.stderr


# ---------------------------------------------------------------------------------------------
# compiling in this process
# ---------------------------------------------------------------------------------------------

_fresh = itertools.count(1)


def _compile_new_kernel(monkeypatch) -> np.ndarray:
    """Jit a kernel this process has not compiled yet (a new constant: new IR), at once."""
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
    monkeypatch.setattr(tier1, "ENABLED", True)
    c = np.float32(1.0 + next(_fresh) / 1024 + 1 / 3 ** 9)
    x = np.linspace(-3, 3, 5000, dtype=np.float32)
    pyjax.config.update("jax_compile_sync", True)
    try:
        return np.asarray(pyjax.jit(lambda x: jnp.tanh(x * c) - jnp.exp(-x * x))(x))
    finally:
        pyjax.config.update("jax_compile_sync", False)


@needs_tier1
def test_fast_compiles_are_not_written_by_default(cache_dir, monkeypatch):
    # JAX's default threshold (1 s) is far above a tier 1 kernel's compile time
    pyjax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
    _compile_new_kernel(monkeypatch)  # (a first kernel: with the shared functions it calls
    tier1.wait()                      # and those it sets compiling in the background)
    before = engine.counts()["compiled"], disk_cache.statistics()["skipped"]
    _compile_new_kernel(monkeypatch)
    tier1.wait()  # (its optimised code, compiled after the quick code's first call)
    assert (engine.counts()["compiled"], disk_cache.statistics()["skipped"]) == (
        before[0] + 1, before[1] + 1)
    assert _entries(cache_dir) == []
    pyjax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    _compile_new_kernel(monkeypatch)
    tier1.wait()
    assert len(_entries(cache_dir)) == 1

