"""Global configuration flags, read and set like `jax.config`.

Flags are plain attributes of one `Config` object so that hot paths read them with a single
attribute lookup (`config.x64`).  `config.update(name, value)` accepts JAX's option names.
"""
from __future__ import annotations

import contextlib
import enum
import functools
import itertools
import os
import sys
import threading
from typing import Any, Iterator


def _env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on", "t", "y")


# option name -> (attribute, default) ; attribute None means "accepted, no effect on NumPy".
_OPTIONS: dict[str, tuple[str, Any]] = {
    "jax_enable_x64": ("x64", False),
    "jax_platform_name": ("platform_name", "cpu"),
    "jax_platforms": ("platforms", "cpu"),
    "jax_default_matmul_precision": ("default_matmul_precision", None),
    "jax_numpy_rank_promotion": ("numpy_rank_promotion", "allow"),
    "jax_numpy_dtype_promotion": ("numpy_dtype_promotion", "standard"),
    "jax_disable_jit": ("disable_jit", False),
    "jax_debug_nans": ("debug_nans", False),
    "jax_debug_infs": ("debug_infs", False),
    "jax_log_compiles": ("log_compiles", False),
    "jax_traceback_filtering": ("traceback_filtering", "auto"),
    "jax_default_prng_impl": ("default_prng_impl", "threefry2x32"),
    "jax_threefry_partitionable": ("threefry_partitionable", True),
    "jax_enable_checks": ("enable_checks", False),
    "jax_num_cpu_devices": ("num_cpu_devices", 1),
    "eager_constant_folding": ("eager_constant_folding", False),
    "jax_softmax_custom_jvp": ("softmax_custom_jvp", False),
    "jax_explain_cache_misses": ("explain_cache_misses", False),
    "jax_default_device": ("default_device", None),
    "jax_check_tracer_leaks": ("check_tracer_leaks", False),
    "jax_transfer_guard": ("transfer_guard", None),
    "jax_transfer_guard_host_to_device": ("transfer_guard_host_to_device", None),
    "jax_transfer_guard_device_to_host": ("transfer_guard_device_to_host", None),
    "jax_transfer_guard_device_to_device": ("transfer_guard_device_to_device", None),
    "jax_enable_custom_prng": ("enable_custom_prng", False),
    "jax_legacy_prng_key": ("legacy_prng_key", None),  # set below, once the enum exists
    "jax_debug_key_reuse": ("debug_key_reuse", False),
    "jax_enable_compilation_cache": ("enable_compilation_cache", True),
    "jax_compilation_cache_dir": ("compilation_cache_dir", None),
    "jax_persistent_cache_min_compile_time_secs": ("persistent_cache_min_compile_time_secs", 1.0),
    "jax_persistent_cache_min_entry_size_bytes": ("persistent_cache_min_entry_size_bytes", 0),
    "jax_raise_persistent_cache_errors": ("raise_persistent_cache_errors", False),
    "jax_no_tracing": ("no_tracing", False),
    "jax_no_execution": ("no_execution", False),
    # jax2tf's lowering choice for cumulative reductions: no effect outside jax2tf (in JAX
    # too), and pyjax has no jax2tf
    "jax2tf_associative_scan_reductions": ("jax2tf_associative_scan_reductions", False),
    # pyjax's own: compile tier 1 kernels before the first call instead of in the background
    "jax_compile_sync": ("compile_sync", False),
    # False: every jitted call computes before it returns (backend/async_dispatch.py)
    "jax_cpu_enable_async_dispatch": ("cpu_enable_async_dispatch", True),
    # False: lax.reduce_sum of float16/bfloat16 operands is an error (primitives/reductions.py)
    "jax_allow_f16_reductions": ("allow_f16_reductions", True),
    # False: a shard_map body under check_vma gets no implicit pvary where operands' varying
    # axes differ, but JAX's error (parallel/vma.py)
    "jax_auto_pcast": ("auto_pcast", True),
    # what happens when the cyclic garbage collector, not reference counting, frees an Array:
    # None/"allow" nothing, "log" an error logged, "fatal" the process aborts (gc_guard.py)
    "jax_array_garbage_collection_guard": ("array_garbage_collection_guard", None),
    # True: a multi-process collective called from a thread other than the one that set the
    # guard is an error (thread_guard.py)
    "jax_thread_guard": ("thread_guard", False),
    # True: mesh axes of size 1 are left out of types (explicit shardings, shard_map bodies'
    # varying axes), with_sharding_constraint's check and psum's axes (parallel/size_one.py)
    "jax_remove_size_one_mesh_axis_from_type": ("remove_size_one_mesh_axis_from_type", False),
}


class LegacyPrngKeyState(enum.StrEnum):
    """What jax.random does when handed a raw uint32 key: accept, warn, or raise."""
    ALLOW = "allow"
    WARN = "warn"
    ERROR = "error"


_OPTIONS["jax_legacy_prng_key"] = ("legacy_prng_key", LegacyPrngKeyState.ALLOW)


#: options that change the jaxpr a trace produces (so they key trace caches)
_TRACE_OPTIONS = ("x64", "numpy_rank_promotion", "numpy_dtype_promotion",
                  "default_matmul_precision", "default_prng_impl", "threefry_partitionable",
                  "eager_constant_folding", "debug_nans", "debug_infs", "softmax_custom_jvp",
                  "no_tracing", "default_device", "debug_key_reuse", "allow_f16_reductions",
                  "auto_pcast", "remove_size_one_mesh_axis_from_type")

#: options whose value must be one of a few strings
_ENUM_CHOICES = {"numpy_rank_promotion": ("allow", "warn", "raise")}

_TRANSFER_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
#: options whose value must be None or one of a few strings
_OPTIONAL_ENUM_CHOICES = {attr: _TRANSFER_GUARD_LEVELS for attr in (
    "transfer_guard", "transfer_guard_host_to_device", "transfer_guard_device_to_host",
    "transfer_guard_device_to_device")}
_OPTIONAL_ENUM_CHOICES["array_garbage_collection_guard"] = ("allow", "log", "fatal")

_BOOL_OPTIONS = frozenset(
    ("x64", "disable_jit", "debug_nans", "debug_infs", "enable_checks", "eager_constant_folding",
     "threefry_partitionable", "explain_cache_misses", "check_tracer_leaks",
     "enable_custom_prng", "debug_key_reuse", "enable_compilation_cache",
     "raise_persistent_cache_errors", "no_tracing", "no_execution", "compile_sync",
     "cpu_enable_async_dispatch",
     "jax2tf_associative_scan_reductions", "allow_f16_reductions", "auto_pcast",
     "thread_guard", "remove_size_one_mesh_axis_from_type"))


#: attribute -> hook(old, new, local) called when an option's stored value changes: the global
#: value (local False), or this thread's override (local True; `_UNSET` for none)
_HOOKS: dict[str, Any] = {}


def _hook_in(module: str) -> Any:
    """A hook that is `module`'s `on_change`, imported when the option first changes."""
    def hook(old: Any, new: Any, local: bool) -> None:
        import importlib
        importlib.import_module(module).on_change(old, new, local)
    return hook


_HOOKS["array_garbage_collection_guard"] = _hook_in("pyjax._src.gc_guard")
_HOOKS["thread_guard"] = _hook_in("pyjax._src.thread_guard")


class _Overrides(threading.local):
    """This thread's context-manager settings (attribute -> value), over the global ones."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}


#: the process-wide values, and this thread's overrides (one store each, read by every flag)
config_global: dict[str, Any] = {attr: default for attr, default in _OPTIONS.values()}
config_global["x64"] = _env_bool("JAX_ENABLE_X64")
config_global["disable_jit"] = _env_bool("JAX_DISABLE_JIT")

#: the persistent compilation cache's typed options, as JAX checks them: type(s), type's name
_TYPED_OPTIONS: dict[str, tuple[Any, str]] = {
    "compilation_cache_dir": (str, "string"),
    "persistent_cache_min_compile_time_secs": ((float, int), "float"),
    "persistent_cache_min_entry_size_bytes": (int, "int")}


def _env_options() -> None:
    """The persistent cache's options from their environment variables (JAX_COMPILATION_CACHE_DIR
    ...), which JAX reads for every option."""
    for name in ("jax_enable_compilation_cache", "jax_raise_persistent_cache_errors"):
        attr = _OPTIONS[name][0]
        config_global[attr] = _env_bool(name.upper(), config_global[attr])
    for name, parse in (("jax_compilation_cache_dir", str),
                        ("jax_persistent_cache_min_compile_time_secs", float),
                        ("jax_persistent_cache_min_entry_size_bytes", int)):
        value = os.environ.get(name.upper())
        if value is not None:
            try:
                config_global[_OPTIONS[name][0]] = parse(value)
            except ValueError:
                raise ValueError(f'Invalid value "{value}" for JAX flag {name}') from None


_env_options()
config_local = _Overrides()
#: each trace key of the process-wide values seen -> its `Config.global_trace_number` (drawn
#: from a counter: threads updating at once never share one)
_global_trace_numbers: dict = {}
_next_trace_number = itertools.count()


class Config:
    """Every flag, read as an attribute (`config.x64`).  `update` sets the process-wide value;
    the context managers (`enable_x64(...)`, `disable_jit()`, ...) override it for the current
    thread only, as JAX's do, so threads toggling options never see each other's settings."""

    def __init__(self) -> None:
        object.__setattr__(self, "_global", config_global)
        object.__setattr__(self, "_local", config_local)
        self._new_global_trace_key()

    def _new_global_trace_key(self) -> None:
        """Work out trace_key() of the process-wide values, and `global_trace_number`: it as
        a small int (one per distinct key), a cache key part read without a call or hashing
        by threads that override nothing (eager plans)."""
        key = tuple(self._global[a] for a in _TRACE_OPTIONS)
        object.__setattr__(self, "_global_trace_key", key)
        object.__setattr__(self, "global_trace_number",
                           _global_trace_numbers.setdefault(key, next(_next_trace_number)))

    def update(self, name: str, value: Any) -> None:
        """Set option `name` (e.g. "jax_enable_x64") to `value`, for every thread."""
        attr, value = _validated(name, value)
        old = self._global[attr]
        self._global[attr] = value
        hook = _HOOKS.get(attr)
        if hook is not None:
            hook(old, value, False)
        if attr == "transfer_guard":  # JAX's all-directions option sets each direction
            for direction in _TRANSFER_DIRECTIONS:
                self._global[f"transfer_guard_{direction}"] = value
        self._new_global_trace_key()

    @property
    def values(self) -> dict[str, Any]:
        """Every option's value as this thread sees it, by JAX name."""
        return {name: getattr(self, attr) for name, (attr, _) in _OPTIONS.items()}

    def config_with_absl(self) -> None:
        """Define an absl flag per option (`--jax_enable_x64=true`); the flags given on the
        command line are applied once absl has parsed them (in `app.run`)."""
        from absl import app, flags
        _define_absl_flags(flags)
        app.call_after_init(lambda: self._complete_absl_config(flags))

    def parse_flags_with_absl(self) -> None:
        """Parse the `--jax*` arguments of sys.argv (before any `--`) with absl, now."""
        global _configured_with_absl
        if _configured_with_absl:
            return
        import absl.flags
        argv = ["", *(a for a in itertools.takewhile(lambda a: a != "--", sys.argv)
                      if a.startswith("--jax"))]
        self.config_with_absl()
        absl.flags.FLAGS(argv, known_only=True)
        self._complete_absl_config(absl.flags)
        _configured_with_absl = True

    def _complete_absl_config(self, flags: Any) -> None:
        for name in _OPTIONS:
            try:
                flag = flags.FLAGS[name]
            except KeyError:
                continue
            if flag.present:
                self.update(name, flag.value)

    def trace_key(self) -> tuple:
        """The options that change what tracing produces, as this thread sees them: part of
        every trace cache's key (jit's), as JAX makes them part of its."""
        overrides = self._local.values
        if not overrides:
            return self._global_trace_key
        return tuple(overrides.get(a, self._global[a]) for a in _TRACE_OPTIONS)

    def read(self, name: str) -> Any:
        """Value of option `name` in this thread."""
        return getattr(self, _OPTIONS[name][0])

    def _override(self, name: str, value: Any) -> Any:
        """Set option `name` for this thread; returns the token `_restore` takes back."""
        attr, value = _validated(name, value)
        overrides = self._local.values
        previous = overrides.get(attr, _UNSET)
        overrides[attr] = value
        hook = _HOOKS.get(attr)
        if hook is not None:
            hook(previous, value, True)
        return attr, previous

    def _restore(self, token: Any) -> None:
        attr, previous = token
        current = self._local.values.get(attr, _UNSET)
        if previous is _UNSET:
            self._local.values.pop(attr, None)
        else:
            self._local.values[attr] = previous
        hook = _HOOKS.get(attr)
        if hook is not None:
            hook(current, previous, True)

    def __getattr__(self, name: str) -> Any:
        # `config.jax_enable_x64` reads like JAX's config object.
        if name in _OPTIONS:
            return getattr(self, _OPTIONS[name][0])
        raise AttributeError(f"Unrecognized config option: {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("use config.update(name, value) to change pyjax options")


_UNSET = object()
_TRANSFER_DIRECTIONS = ("host_to_device", "device_to_host", "device_to_device")
_configured_with_absl = False


def _define_absl_flags(flags: Any) -> None:
    """One absl flag per option, typed by its default (bool, int, float, enum or string)."""
    for name, (attr, default) in _OPTIONS.items():
        if name in flags.FLAGS:
            continue
        doc = f"pyjax option {name}"
        if attr in _BOOL_OPTIONS or isinstance(default, bool):
            flags.DEFINE_bool(name, default, doc)
        elif attr in _ENUM_CHOICES or attr in _OPTIONAL_ENUM_CHOICES:
            choices = _ENUM_CHOICES.get(attr) or _OPTIONAL_ENUM_CHOICES[attr]
            flags.DEFINE_enum(name, default, list(choices), doc)
        elif isinstance(default, enum.Enum):
            flags.DEFINE_enum(name, default.value, [m.value for m in type(default)], doc)
        elif isinstance(default, int):
            flags.DEFINE_integer(name, default, doc)
        elif isinstance(default, float):
            flags.DEFINE_float(name, default, doc)
        else:
            flags.DEFINE_string(name, default, doc)


def _validated(name: str, value: Any) -> tuple[str, Any]:
    try:
        attr, _ = _OPTIONS[name]
    except KeyError:
        raise AttributeError(f"Unrecognized config option: {name}") from None
    if attr in _BOOL_OPTIONS:
        value = bool(value)
    choices = _ENUM_CHOICES.get(attr)
    if choices is not None and value not in choices:
        raise ValueError(f"new enum value must be in {list(choices)}, got {value} of type "
                         f"{type(value)}.")
    choices = _OPTIONAL_ENUM_CHOICES.get(attr)
    if choices is not None and value is not None and value not in choices:
        raise ValueError(f"new enum value must be None or in {list(choices)}, got {value} of "
                         f"type {type(value)}.")
    if attr == "numpy_dtype_promotion" and value not in ("standard", "strict"):
        raise ValueError(f"{value!r} is not a valid NumpyDtypePromotion")
    if attr == "legacy_prng_key":
        value = LegacyPrngKeyState(value)
    if attr == "default_device":
        _check_default_device(value)
    typed = _TYPED_OPTIONS.get(attr)
    if typed is not None and value is not None and not isinstance(value, typed[0]):
        kind = typed[1]
        raise ValueError(f"new {kind} config value must be None or of type "
                         f"{'str' if kind == 'string' else kind}, got {value} of type "
                         f"{type(value)}{'.' if kind == 'string' else ''}")
    return attr, value


def _check_default_device(value: Any) -> None:
    """JAX's check on `jax_default_device`: None, a platform name or a Device."""
    from pyjax._src.parallel.devices import Device
    if value is not None and not isinstance(value, (str, Device)):
        raise ValueError("jax.default_device must be passed either a Device object (e.g. "
                         "`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or "
                         f"'gpu', got: {value}")


def _option_property(attr: str) -> property:
    """A flag's value: this thread's override if there is one, else the global value.  (Hot:
    read on every dispatch; the getter closes over the two stores to skip attribute lookups.)"""
    def get(self: Config, _local: Any = config_local, _global: dict = config_global) -> Any:
        overrides = _local.values
        if overrides and attr in overrides:
            return overrides[attr]
        return _global[attr]
    return property(get)


for _attr, _ in _OPTIONS.values():
    setattr(Config, _attr, _option_property(_attr))


config = Config()


_NO_DEFAULT = object()


class State:
    """One option as JAX exposes it at top level (`jax.enable_x64`): `.value` reads it;
    calling it gives a context manager (or decorator) that sets it for the current thread for
    a block and restores it after."""

    def __init__(self, option: str, default_context_value: Any = _NO_DEFAULT):
        self._option = option
        self._default_context_value = default_context_value
        self.__name__ = option.removeprefix("jax_")

    @property
    def value(self) -> Any:
        return config.read(self._option)

    def __call__(self, new_value: Any = _NO_DEFAULT) -> "_StateContext":
        if new_value is _NO_DEFAULT:
            if self._default_context_value is _NO_DEFAULT:
                raise TypeError(f"Context manager for {self.__name__} config option requires "
                                "an argument representing the new value for the config "
                                "option.")
            new_value = self._default_context_value
        return _StateContext(self._option, new_value)

    def __bool__(self) -> bool:
        raise TypeError("bool() not supported for instances of type 'State' (did you mean to "
                        "use 'State.value' instead?)")


class _StateContext:
    """Sets an option for the current thread while entered (one object may be entered by
    several threads at once: each keeps its own tokens)."""

    __slots__ = ("option", "new_value", "tokens")

    def __init__(self, option: str, new_value: Any):
        self.option, self.new_value = option, new_value
        self.tokens: dict[int, list] = {}

    def __enter__(self) -> None:
        token = config._override(self.option, self.new_value)
        self.tokens.setdefault(threading.get_ident(), []).append(token)

    def __exit__(self, *exc_info: Any) -> None:
        stack = self.tokens[threading.get_ident()]
        config._restore(stack.pop())
        if not stack:
            del self.tokens[threading.get_ident()]

    def __call__(self, fun: Any) -> Any:
        @functools.wraps(fun)
        def with_option(*args: Any, **kwargs: Any) -> Any:
            with _StateContext(self.option, self.new_value):
                return fun(*args, **kwargs)
        return with_option


# the options pyjax honours, as top-level context managers (jax.enable_x64(True): ...)
enable_x64 = State("jax_enable_x64", True)
enable_checks = State("jax_enable_checks", True)
threefry_partitionable = State("jax_threefry_partitionable", True)
default_prng_impl = State("jax_default_prng_impl")
numpy_rank_promotion = State("jax_numpy_rank_promotion")
numpy_dtype_promotion = State("jax_numpy_dtype_promotion")
default_matmul_precision = State("jax_default_matmul_precision")
debug_nans = State("jax_debug_nans", True)
debug_infs = State("jax_debug_infs", True)
debug_key_reuse = State("jax_debug_key_reuse", True)
log_compiles = State("jax_log_compiles", True)
softmax_custom_jvp = State("jax_softmax_custom_jvp", True)
explain_cache_misses = State("jax_explain_cache_misses", True)
check_tracer_leaks = State("jax_check_tracer_leaks", True)
checking_leaks = functools.partial(check_tracer_leaks, True)
legacy_prng_key = State("jax_legacy_prng_key")
enable_custom_prng = State("jax_enable_custom_prng", True)
default_device = State("jax_default_device")
no_tracing = State("jax_no_tracing", True)
no_execution = State("jax_no_execution", True)
transfer_guard_host_to_device = State("jax_transfer_guard_host_to_device")
transfer_guard_device_to_host = State("jax_transfer_guard_device_to_host")
transfer_guard_device_to_device = State("jax_transfer_guard_device_to_device")
jax2tf_associative_scan_reductions = State("jax2tf_associative_scan_reductions", True)
allow_f16_reductions = State("jax_allow_f16_reductions", True)
auto_pcast = State("jax_auto_pcast", True)
array_garbage_collection_guard = State("jax_array_garbage_collection_guard")
thread_guard = State("jax_thread_guard", True)
remove_size_one_mesh_axis_from_type = State("jax_remove_size_one_mesh_axis_from_type", True)


def add_trace_option(attr: str, default: Any) -> None:
    """A new option `attr` (no JAX name) whose value keys trace caches like the
    `_TRACE_OPTIONS` (`jax.make_user_context`); set through `config_global` and
    `config_local.values`."""
    global _TRACE_OPTIONS
    config_global[attr] = default
    _TRACE_OPTIONS = (*_TRACE_OPTIONS, attr)
    config._new_global_trace_key()


@contextlib.contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
    """Context manager setting the transfer guard level of all three directions for this
    thread."""
    with contextlib.ExitStack() as stack:
        for direction in _TRANSFER_DIRECTIONS:
            stack.enter_context(_StateContext(f"jax_transfer_guard_{direction}", new_val))
        yield


def disable_jit(disable: bool = True) -> _StateContext:
    """Context manager (or decorator) under which jit runs its function op by op, eagerly."""
    return _StateContext("jax_disable_jit", disable)


def ensure_compile_time_eval() -> _StateContext:
    """Context manager under which operations on concrete values are computed while tracing,
    even inside jit, so their results can drive Python control flow."""
    return _StateContext("eager_constant_folding", True)
