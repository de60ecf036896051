"""Meshes: devices laid out along named axes (`Mesh`), their device-free shape (`AbstractMesh`),
and the thread-local mesh context that `jax.set_mesh`, `with mesh:` and `use_abstract_mesh` set.

As in JAX, meshes compare and hash by value (devices, axis names, axis types), AxisType says
how an axis is partitioned (Auto: by the compiler, Explicit: in the types, Manual: by the user).
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import enum
import functools
import math
import threading
import warnings
from typing import Any, Sequence

import numpy as np

from pyjax._src.core import array as array_lib


class AxisType(enum.Enum):
    """How a mesh axis is partitioned: Auto (by the compiler), Explicit (in the array types),
    Manual (by the user, inside shard_map)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name


def show_axes(axes: Any) -> str:
    """Axis names as JAX lists them in messages: sorted, back-quoted."""
    return ", ".join(sorted(f"`{a}`" for a in axes))


def _normalize_axis_types(axis_names: tuple, axis_types: Any, name: str) -> tuple:
    if axis_types is None:
        axis_types = (AxisType.Auto,) * len(axis_names)
    if not isinstance(axis_types, tuple):
        axis_types = (axis_types,)
    if not all(isinstance(a, AxisType) for a in axis_types):
        raise TypeError(
            f"axis_types passed to {name} must be of type `jax.sharding.AxisType`. Got "
            f"{axis_types} of type {tuple(type(a) for a in axis_types)}")
    if len(axis_names) != len(axis_types):
        raise ValueError("Number of axis names should match the number of axis_types. Got "
                         f"axis_names={axis_names} and axis_types={axis_types}")
    if AxisType.Explicit in axis_types:  # values may now carry shardings in their types
        from pyjax._src.parallel.explicit import activate
        activate()
    return axis_types


class _BaseMesh:
    """What Mesh and AbstractMesh share: axis names, sizes and types."""

    axis_names: tuple
    axis_types: tuple

    @property
    def shape_tuple(self) -> tuple:
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def shape(self) -> collections.OrderedDict:
        return collections.OrderedDict(self.shape_tuple)

    @property
    def empty(self) -> bool:
        return self.size == 0

    def _axes_of(self, kind: AxisType) -> tuple:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t == kind)

    @property
    def auto_axes(self) -> tuple:
        return self._axes_of(AxisType.Auto)

    @property
    def explicit_axes(self) -> tuple:
        return self._axes_of(AxisType.Explicit)

    @property
    def manual_axes(self) -> tuple:
        return self._axes_of(AxisType.Manual)

    def _all(self, kind: AxisType) -> bool:
        return bool(self.axis_types) and all(t == kind for t in self.axis_types)

    @property
    def are_all_axes_auto(self) -> bool:
        return self._all(AxisType.Auto)

    @property
    def are_all_axes_explicit(self) -> bool:
        return self._all(AxisType.Explicit)

    @property
    def are_all_axes_manual(self) -> bool:
        return self._all(AxisType.Manual)

    @property
    def _name_to_type(self) -> dict:
        return dict(zip(self.axis_names, self.axis_types))

    @property
    def _any_axis_manual(self) -> bool:
        return AxisType.Manual in self.axis_types


class Mesh(_BaseMesh, contextlib.ContextDecorator):
    """An ndarray of devices with one name per dimension (`Mesh(devices, ('x', 'y'))`)."""


    def __init__(self, devices: np.ndarray | Sequence[Any], axis_names: str | Sequence[Any],
                 axis_types: tuple[AxisType, ...] | AxisType | None = None):
        if not isinstance(devices, np.ndarray):
            devices = np.array(devices)
        axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if any(a is None for a in axis_names):
            raise ValueError(f"Mesh axis names cannot be None. Got: {axis_names}")
        if devices.ndim != len(axis_names):
            raise ValueError(
                "Mesh requires the ndim of its first argument (`devices`) to equal the length "
                "of its second argument (`axis_names`), but got "
                f"devices.ndim == {devices.ndim} and len(axis_names) == {len(axis_names)}.")
        flat = tuple(devices.flat)
        held = np.empty(len(flat), dtype=object)  # object array even for NumPy ints given
        held[:] = flat
        devices = held.reshape(devices.shape)
        devices.flags.writeable = False
        self.devices = devices
        self.axis_names = axis_names
        self.axis_types = _normalize_axis_types(axis_names, axis_types, "Mesh")
        self.size = 0 if (not axis_names and flat[0] is None) else math.prod(devices.shape)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Mesh) and self.axis_names == other.axis_names
                and self.axis_types == other.axis_types
                and self.devices.shape == other.devices.shape
                and self._flat_devices_tuple == other._flat_devices_tuple)

    def __hash__(self) -> int:
        return hash((self.axis_names, self.axis_types, self.devices.shape,
                     self._flat_devices_tuple))

    def __reduce__(self) -> Any:
        return (Mesh, (self.devices, self.axis_names, self.axis_types))

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return self.devices.shape

    @property
    def is_scalar(self) -> bool:
        return self.size == 1 and not self.axis_names

    @functools.cached_property
    def _flat_devices_tuple(self) -> tuple:
        return tuple(self.devices.flat)

    @functools.cached_property
    def _flat_devices_set(self) -> set:
        return set(self.devices.flat)

    @property
    def device_ids(self) -> np.ndarray:
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self) -> list:
        return list(self.devices.flat)  # one process holds every device

    @property
    def _local_devices_set(self) -> set:
        return self._flat_devices_set

    @property
    def is_multi_process(self) -> bool:
        return False

    @property
    def local_mesh(self) -> "Mesh":
        return self

    @functools.cached_property
    def abstract_mesh(self) -> "AbstractMesh":
        if not self.axis_names:
            return EMPTY_ABSTRACT_MESH
        d = self.devices.flat[0]
        device = None if d is None else AbstractDevice(d.device_kind, None, d.platform)
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types,
                            abstract_device=device)

    def update(self, devices: Any = None, axis_names: Any = None, axis_types: Any = None
               ) -> "Mesh":
        return Mesh(self.devices if devices is None else devices,
                    self.axis_names if axis_names is None else axis_names,
                    self.axis_types if axis_types is None else axis_types)

    def __enter__(self) -> "Mesh":
        warnings.warn("`with mesh:` context manager has been deprecated. Please use `with "
                      "jax.set_mesh(mesh):` instead.", category=DeprecationWarning, stacklevel=2)
        _state.resource_stack.append(self)
        _rekey()
        return self

    def __exit__(self, *exc: Any) -> bool:
        _state.resource_stack.pop()
        _rekey()
        return False

    def __str__(self) -> str:
        if self.empty:
            return "Mesh()"
        axes = ", ".join(f"'{k}': {v}" for k, v in self.shape.items())
        return f"Mesh({axes}, axis_types={self.axis_types})"

    def __repr__(self) -> str:
        if self.empty:
            return "Mesh(axis_sizes=(), axis_names=())"
        return (f"Mesh(axis_sizes={self.devices.shape}, axis_names={self.axis_names!r}, "
                f"axis_types={self.axis_types})")


@dataclasses.dataclass(frozen=True, slots=True)
class AbstractDevice:
    """What an abstract mesh keeps of its devices: their kind and platform."""

    device_kind: str
    num_cores: int | None
    platform: str

    def __repr__(self) -> str:
        return f"AbstractDevice({self._repr()})"

    def _repr(self) -> str:
        return (f"device_kind={self.device_kind}, num_cores={self.num_cores}, "
                f"platform={self.platform}")


class AbstractMesh(_BaseMesh):
    """A mesh's axis names, sizes and types without its devices (what tracing sees)."""

    __slots__ = ("axis_sizes", "axis_names", "axis_types", "abstract_device", "size")

    def __init__(self, axis_sizes: tuple[int, ...], axis_names: tuple[Any, ...],
                 axis_types: AxisType | tuple[AxisType, ...] | None = None, *,
                 abstract_device: AbstractDevice | None = None):
        self.axis_sizes = tuple(axis_sizes)
        self.axis_names = tuple(axis_names)
        self.axis_types = _normalize_axis_types(self.axis_names, axis_types, "AbstractMesh")
        self.abstract_device = abstract_device
        self.size = math.prod(self.axis_sizes) if self.axis_sizes else 0

    def _key(self) -> tuple:
        return (self.axis_sizes, self.axis_names, self.axis_types, self.abstract_device)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbstractMesh) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __reduce__(self) -> Any:
        return (_abstract_mesh, self._key())

    def __repr__(self) -> str:
        axes = (", ".join(f"'{n}': {v}" for n, v in self.shape_tuple)
                if self.shape_tuple else "()")
        device = "" if self.abstract_device is None else f", {self.abstract_device._repr()}"
        return f"AbstractMesh({axes}, axis_types={self.axis_types}{device})"

    @property
    def abstract_mesh(self) -> "AbstractMesh":
        return self

    def update(self, axis_sizes: Any = None, axis_names: Any = None, axis_types: Any = None,
               **kwargs: Any) -> "AbstractMesh":
        kwargs.setdefault("abstract_device", self.abstract_device)
        return AbstractMesh(self.axis_sizes if axis_sizes is None else axis_sizes,
                            self.axis_names if axis_names is None else axis_names,
                            self.axis_types if axis_types is None else axis_types, **kwargs)

    def update_axis_types(self, name_to_type: dict) -> "AbstractMesh":
        return self.update(axis_types=tuple(name_to_type.get(n, t) for n, t in
                                            zip(self.axis_names, self.axis_types)))

    def _refuse(name: str) -> Any:  # noqa: N805 - builds the properties below
        def refuse(self: Any, *args: Any) -> Any:
            raise ValueError(f"AbstractMesh does not implement {name}")
        return refuse

    devices = property(_refuse("devices"))
    device_ids = property(_refuse("device_ids"))
    is_multi_process = property(_refuse("is_multi_process"))
    local_devices = property(_refuse("local_devices"))
    local_mesh = property(_refuse("local_mesh"))
    __enter__ = _refuse("__enter__")
    __exit__ = _refuse("__exit__")
    del _refuse


def _abstract_mesh(axis_sizes: tuple, axis_names: tuple, axis_types: tuple,
                   abstract_device: Any) -> AbstractMesh:
    return AbstractMesh(axis_sizes, axis_names, axis_types, abstract_device=abstract_device)


EMPTY_ABSTRACT_MESH = AbstractMesh((), ())
EMPTY_MESH = Mesh(np.empty((), dtype=object), ())


# -- the mesh context (per thread) ------------------------------------------------------------

class _MeshState(threading.local):
    """This thread's meshes: the one `set_mesh` set (concrete and abstract), the one
    `use_abstract_mesh` set, and the `with mesh:` stack (JAX's resource environment)."""

    def __init__(self) -> None:
        self.concrete: Mesh = EMPTY_MESH
        self.abstract: AbstractMesh = EMPTY_ABSTRACT_MESH
        self.resource_stack: list[Mesh] = []
        self.key = 0  # `context_key()`: a small int naming the three
        self.counted = False  # counted in _threads_with_mesh
        self.in_context = False  # counted in threads_in_context


_state = _MeshState()
#: each mesh context seen (concrete, abstract, innermost `with mesh:`) -> its small int
_context_keys: dict = {(EMPTY_MESH, EMPTY_ABSTRACT_MESH, EMPTY_MESH): 0}
_context_keys_lock = threading.Lock()


def _rekey() -> None:
    """Name this thread's mesh context anew after a change (hashing meshes here, once, keeps
    `context_key` a plain attribute read), and count the threads with a mesh set."""
    context = (_state.concrete, _state.abstract,
               _state.resource_stack[-1] if _state.resource_stack else EMPTY_MESH)
    with _context_keys_lock:
        _state.key = _context_keys.setdefault(context, len(_context_keys))
        in_context = _state.key != 0
        if in_context != _state.in_context:
            global threads_in_context
            _state.in_context = in_context
            threads_in_context += 1 if in_context else -1
        has_mesh = not _state.concrete.empty
        if has_mesh != _state.counted:
            global _threads_with_mesh
            _state.counted = has_mesh
            _threads_with_mesh += 1 if has_mesh else -1
            array_lib.layout_hook = _lay_out if _threads_with_mesh else None


#: threads whose `set_mesh` context holds a concrete mesh
_threads_with_mesh = 0
#: threads in some mesh context (context_key() not 0): while none is, hot paths (pmap's short
#: call) skip reading the thread's own key
threads_in_context = 0


def _lay_out(x: Any) -> None:
    """New arrays computed under a concrete mesh live on it, replicated: P() on Auto axes,
    P(None, ...) when an axis is Explicit (JAX's default for such arrays)."""
    mesh = _state.concrete
    if not mesh.empty:
        x._sharding = _replicated(mesh, x._buf.ndim)


@functools.lru_cache(maxsize=256)
def _replicated(mesh: Mesh, rank: int) -> Any:
    from pyjax._src.parallel.sharding import NamedSharding, PartitionSpec
    explicit = any(t == AxisType.Explicit for t in mesh.axis_types)
    return NamedSharding(mesh, PartitionSpec(*([None] * rank if explicit else [])))


def context_key() -> int:
    """The mesh context of this thread as a small int: part of jit's cache key, since a
    function traced under one mesh may stage differently under another (as in JAX)."""
    return _state.key


def get_abstract_mesh() -> AbstractMesh:
    """The abstract mesh in context (`set_mesh`/`use_abstract_mesh`), else the empty one."""
    return _state.abstract


def get_concrete_mesh() -> Mesh:
    """The mesh `set_mesh` put in context, else the empty mesh."""
    return _state.concrete


def resource_mesh() -> Mesh:
    """The innermost mesh entered with the deprecated `with mesh:`, else the empty mesh."""
    return _state.resource_stack[-1] if _state.resource_stack else EMPTY_MESH


def _outside_tracing() -> bool:
    from pyjax._src.core.trace import trace_state
    return trace_state.trace is None


class set_mesh:  # noqa: N801 - JAX's name; a setter that is also a context manager
    """Put `mesh` in context for this thread: at once (a global setter), restored on leaving
    when used as `with jax.set_mesh(mesh):`.  PartitionSpecs then name its axes."""

    __slots__ = ("prev_abstract_mesh", "prev_mesh")

    def __init__(self, mesh: Mesh | None):
        if mesh is not None and not isinstance(mesh, Mesh):
            raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
        if not _outside_tracing():
            raise ValueError("`set_mesh` can only be used outside of `jax.jit`.")
        if mesh is not None and mesh._any_axis_manual:
            raise ValueError(
                f"mesh {mesh} contains manual axes which is not allowed when using "
                "`jax.set_mesh`. Please use `jax.shard_map` to enter into `Manual` mode "
                "instead.")
        self.prev_abstract_mesh = _state.abstract
        self.prev_mesh = _state.concrete
        _state.abstract = EMPTY_ABSTRACT_MESH if mesh is None else mesh.abstract_mesh
        _state.concrete = EMPTY_MESH if mesh is None else mesh
        _rekey()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        _state.abstract = self.prev_abstract_mesh
        _state.concrete = self.prev_mesh
        _rekey()


class use_abstract_mesh:  # noqa: N801 - JAX's name
    """Put an abstract mesh in context for this thread while the `with` block runs."""

    __slots__ = ("mesh", "prev")

    def __init__(self, mesh: AbstractMesh):
        if not isinstance(mesh, AbstractMesh):
            raise ValueError("Expected mesh of type `jax.sharding.AbstractMesh`. Got type: "
                             f"{type(mesh)}")
        self.mesh = mesh

    def __enter__(self) -> None:
        prev = _state.abstract
        if not prev.empty and not self.mesh.empty and prev.size != self.mesh.size:
            raise ValueError(
                f"use_abstract_mesh cannot change the size of the mesh. Got new mesh: "
                f"{self.mesh} with size={self.mesh.size} and prev mesh: {prev} with "
                f"size={prev.size}")
        self.prev = prev
        _state.abstract = self.mesh
        _rekey()

    def __exit__(self, *exc: Any) -> None:
        _state.abstract = self.prev
        _rekey()


def get_mesh() -> Mesh:
    """The mesh `set_mesh` put in context (only outside of tracing)."""
    if not _outside_tracing():
        raise ValueError("`get_mesh` can only be used outside of `jax.jit`. Maybe you want "
                         "`jax.sharding.get_abstract_mesh()`?")
    return _state.concrete


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str],
              axis_types: tuple[AxisType, ...] | None = None, *,
              devices: Sequence[Any] | None = None) -> Mesh:
    """A mesh of the first prod(axis_shapes) devices in order (host devices have no topology
    to follow), its axes Explicit unless `axis_types` says otherwise."""
    from pyjax._src.parallel.devices import devices as all_devices
    if devices is None:
        devices = all_devices()
    try:
        shape = tuple(int(s) for s in axis_shapes)
    except (TypeError, ValueError):
        raise ValueError("`axis_shapes` passed to `make_mesh` should be a sequence of ints. "
                         f"Got {axis_shapes}") from None
    size = math.prod(shape)
    if size > len(devices):
        raise ValueError(f"Number of devices {len(devices)} must be >= the product of "
                         f"mesh_shape {shape}")
    held = np.empty(size, dtype=object)
    held[:] = list(devices)[:size]
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(shape)
    return Mesh(held.reshape(shape), axis_names, axis_types=axis_types)
