"""`pyjax.Array`: the base of concrete arrays and tracers, and `ArrayImpl`, a NumPy buffer.

Operators and methods (`+`, `sum`, `reshape`, `.at`, indexing ...) are attached to `Array` by
`pyjax._src.numpy.array_methods`, so concrete arrays and tracers share one definition.
An ArrayImpl never changes after construction: its buffer is only handed out read-only.
"""
from __future__ import annotations

import operator
from typing import Any, Iterator

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.trace_state import trace_state

#: set while some thread has a mesh in context (`jax.set_mesh`: parallel/mesh.py): lays a new
#: array out on that thread's mesh, as JAX does with arrays computed under it
layout_hook: Any = None


def read_only_view(buf: np.ndarray) -> np.ndarray:
    """`buf`'s memory as an ndarray that cannot be made writeable (its base is a read-only
    memoryview, as JAX's `np.asarray` results are): users never mutate an Array's buffer."""
    try:
        return np.asarray(memoryview(buf).toreadonly())
    except ValueError:  # ml_dtypes (bfloat16, float8, int4) have no buffer format code
        raw = np.asarray(memoryview(buf.view(f"u{buf.dtype.itemsize}")).toreadonly())
        return raw.view(buf.dtype)


class Array:
    """Abstract base: `isinstance(x, pyjax.Array)` holds for concrete arrays and tracers."""

    __slots__ = ()
    __array_priority__ = 100


class ArrayImpl(Array):
    """A concrete array: an immutable NumPy buffer plus JAX's weak-type flag."""

    __slots__ = ("_buf", "_weak", "_read_only", "_committed", "_sharding", "_in_trace",
                 "_python", "__weakref__")

    def __init__(self, buf: np.ndarray, weak: bool = False):
        self._buf = buf
        self._weak = weak
        self._sharding = None  # (set when placed; always set: readers never take an exception)
        if trace_state.trace is not None:  # a constant made while tracing (see made_in_trace)
            self._in_trace = True
        if layout_hook is not None:  # a mesh is set somewhere: laid out on this thread's
            layout_hook(self)

    def made_in_trace(self) -> bool:
        """Whether this array was made while a function was being traced (a constant such
        as `jnp.float32(2.)` inside it: staged as a literal when 0-d) rather than before
        (closed over: a constvar), as JAX tells its literalable constants from Arrays."""
        try:
            return self._in_trace
        except AttributeError:
            return False

    def python_value(self) -> Any:
        """The Python float or complex this weak 0-d constant was made from while tracing
        (`weak_constant`), else None: JAX keeps that number itself as the constant
        (a TypedFloat), so its literal prints `0.01:f32[]`, not float32's 0.0099999997..."""
        try:
            return self._python
        except AttributeError:
            return None

    # -- metadata ---------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._buf.shape

    @property
    def dtype(self) -> np.dtype:
        return self._buf.dtype

    @property
    def ndim(self) -> int:
        return self._buf.ndim

    @property
    def size(self) -> int:
        return self._buf.size

    @property
    def itemsize(self) -> int:
        return self._buf.itemsize

    @property
    def nbytes(self) -> int:
        return self._buf.nbytes

    @property
    def weak_type(self) -> bool:
        return self._weak

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self._buf.shape, self._buf.dtype, self._weak)

    # -- conversion to host values ----------------------------------------------------------
    def _host_view(self) -> np.ndarray:
        """The read-only view handed to NumPy, made on first use (`_read_only` starts unset so
        that constructing an Array, on every op, costs nothing extra)."""
        try:
            return self._read_only
        except AttributeError:
            self._read_only = view = read_only_view(self._buf)
            return view

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if copy is None and dtype is None:
            return self._host_view()
        kwargs = {} if copy is None else {"copy": copy}
        return np.asarray(self._host_view(), dtype=dtype, **kwargs)

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: Any = None, copy: bool | None = None) -> Any:
        from pyjax._src.dlpack import to_dlpack
        return to_dlpack(self._buf, stream=stream, max_version=max_version, dl_device=dl_device,
                         copy=copy)

    def __dlpack_device__(self) -> tuple[Any, int]:
        from pyjax._src.dlpack import DLDeviceType
        return DLDeviceType.kDLCPU, 0

    def __bool__(self) -> bool:
        return bool(self._buf)

    def _scalar(self) -> Any:
        if self._buf.ndim:
            raise TypeError("Only scalar arrays can be converted to Python scalars; got "
                            f"arr.ndim={self._buf.ndim}")
        return self._buf[()]

    def _real_scalar(self) -> Any:
        """The element, as a Python complex when complex (int()/float() then refuse it)."""
        value = self._scalar()
        return complex(value) if dtypes.is_complex(self._buf.dtype) else value

    def __int__(self) -> int:
        return int(self._real_scalar())

    def __float__(self) -> float:
        return float(self._real_scalar())

    def __complex__(self) -> complex:
        return complex(self._scalar())

    def __index__(self) -> int:
        if self._buf.ndim or not (dtypes.is_integer(self._buf.dtype)
                                  or self._buf.dtype == dtypes.bool_):
            raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
        return operator.index(self._buf[()])

    def item(self, *args: Any) -> Any:
        return self._buf.item(*args)

    def tolist(self) -> Any:
        return self._buf.tolist()

    def __len__(self) -> int:
        if not self._buf.shape:
            raise TypeError("len() of unsized object")
        return self._buf.shape[0]

    def __iter__(self) -> Iterator["ArrayImpl"]:
        if not self._buf.shape:
            raise TypeError("iteration over a 0-d array")
        weak = self._weak
        return (ArrayImpl(row, weak) for row in self._buf)

    def __reduce__(self) -> Any:
        return (ArrayImpl, (np.array(self._buf), self._weak))

    def copy(self) -> "ArrayImpl":
        return ArrayImpl(self._buf.copy(), self._weak)

    __copy__ = copy

    def __deepcopy__(self, memo: Any) -> "ArrayImpl":
        return self.copy()

    # -- immutability and hashing as in JAX -------------------------------------------------
    __hash__ = None  # type: ignore[assignment]

    def __setitem__(self, index: Any, value: Any) -> None:
        raise TypeError(
            "JAX arrays are immutable and do not support in-place item assignment. Instead of "
            "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
            "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")

    # -- devices (one host device holds every concrete array) -------------------------------
    def block_until_ready(self) -> "ArrayImpl":
        return self

    def copy_to_host_async(self) -> None:
        return None

    def is_ready(self) -> bool:
        return True

    def devices(self) -> set:
        return self.sharding.device_set

    @property
    def device(self) -> Any:
        """The one device holding the array, or its sharding when it spans several."""
        sharding = self.sharding
        devices = sharding.device_set
        return next(iter(devices)) if len(devices) == 1 else sharding

    @property
    def sharding(self) -> Any:
        """How the array is laid out (`_sharding`, None until placed: `device_put`, pmap,
        jit's out_shardings); otherwise held whole by the default device."""
        sharding = getattr(self, "_sharding", None)
        if sharding is not None:
            return sharding
        from pyjax._src.parallel.devices import default_device
        from pyjax._src.parallel.sharding import SingleDeviceSharding
        return SingleDeviceSharding(default_device())

    @property
    def format(self) -> Any:
        """Layout and sharding (`jax.experimental.layout.Format`): buffers are row-major."""
        from pyjax._src.layout import array_format
        return array_format(self)

    @property
    def committed(self) -> bool:
        """Whether the array was placed on a device explicitly (`device_put(x, device)`);
        `_committed` is only ever set then, so plain arrays cost nothing extra."""
        try:
            return self._committed
        except AttributeError:
            return False

    def platform(self) -> str:
        from pyjax._src.parallel.devices import default_backend
        return default_backend()

    @property
    def addressable_shards(self) -> list:
        """Each device's slice of the array (one buffer is shared: the slices are views)."""
        from pyjax._src.parallel.sharding import shards_of
        return shards_of(self)

    @property
    def global_shards(self) -> list:
        return self.addressable_shards

    def addressable_data(self, index: int) -> "ArrayImpl":
        """The data of shard `index` (a single-device array has only shard 0)."""
        return self.addressable_shards[index].data

    def on_device_size_in_bytes(self) -> int:
        return self._buf.nbytes

    def unsafe_buffer_pointer(self) -> int:
        """Address of the first element of the buffer."""
        return self._buf.ctypes.data

    @property
    def traceback(self) -> None:
        """Where the array was made: not recorded by pyjax (recording it would cost every op a
        stack walk), so None, as JAX gives for arrays it has no record for."""
        return None

    def tobytes(self, order: str = "C") -> bytes:
        return self._buf.tobytes(order)

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def is_fully_replicated(self) -> bool:
        return self.sharding.is_fully_replicated

    def delete(self) -> None:
        return None

    def is_deleted(self) -> bool:
        return False

    # -- printing ---------------------------------------------------------------------------
    def __repr__(self) -> str:
        prefix = "Array("
        dtype_str = f"dtype={dtypes.dtype_name(self.dtype)}" + (
            ", weak_type=True)" if self._weak else ")")
        line_width = np.get_printoptions()["linewidth"]
        if self._buf.size == 0:
            body = f"[], shape={self._buf.shape}"
        else:
            body = np.array2string(self._buf, prefix=prefix, suffix=",", separator=", ",
                                   max_line_width=line_width)
        last_line_len = len(body) - body.rfind("\n") + 1
        sep = " " * len(prefix) if last_line_len + len(dtype_str) + 1 > line_width else " "
        return f"{prefix}{body},{sep}{dtype_str}"

    def __str__(self) -> str:
        return str(self._buf)

    def __format__(self, spec: str) -> str:
        # as JAX: a scalar formats as its NumPy scalar, so f"{float32 0.1}" is 0.10000000149011612
        return format(self._buf[()] if self._buf.ndim == 0 else self._buf, spec)


def weak_constant(value: Any, buf: np.ndarray, weak: bool) -> ArrayImpl:
    """The constant `value` converted to `buf` (weak when `weak`).  Made while tracing from a
    Python float or complex whose own (weak) dtype `buf` keeps, it remembers `value`: JAX
    stages that number itself (a TypedFloat), so the literal prints as the user wrote it
    (`0.01:f32[]`); one converted to another dtype prints its converted value, as in JAX."""
    out = ArrayImpl(buf, weak)
    if weak and type(value) in (float, complex) \
            and trace_state.trace is not None \
            and dtypes.dtype_and_weak(value)[0] == buf.dtype:
        out._python = value
    return out
