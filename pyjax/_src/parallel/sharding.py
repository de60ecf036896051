"""Shardings: how an array's elements are laid out over devices (JAX's `jax.sharding`).

`PartitionSpec` names, per array axis, the mesh axes it is split over; `NamedSharding` pairs it
with a mesh; `SingleDeviceSharding` holds an array whole on one device.  Every sharding answers
`devices_indices_map(shape)`: which slice of the array each device holds, computed as XLA's
tiled HLO sharding does (mesh axes of size 1 do not split; axes named together in one entry
split major to minor in the order given).
"""
from __future__ import annotations

import collections
import functools
import math
from typing import Any, Mapping

from pyjax._src.parallel.mesh import AbstractMesh, AxisType, Mesh, show_axes

Shape = tuple[int, ...]
Index = tuple[slice, ...]

MEMORY_KINDS = ("device", "pinned_host", "unpinned_host")


class IndivisibleError(ValueError):
    """An array axis is not a multiple of the number of ways a sharding splits it."""


class DuplicateSpecError(Exception):
    """A PartitionSpec maps one mesh axis to several array axes."""

    def __init__(self, message: str, mesh: Any, pspec: Any):
        super().__init__(message)
        self.message, self.mesh, self.pspec = message, mesh, pspec

    def __str__(self) -> str:
        return self.message


# -- PartitionSpec ----------------------------------------------------------------------------

class UnconstrainedSingleton:
    """The spec entry that leaves one array axis to the partitioner."""

    def __repr__(self) -> str:
        return "UNCONSTRAINED"

    def __reduce__(self) -> Any:
        return (_unconstrained, ())


_UNCONSTRAINED = UnconstrainedSingleton()


def _unconstrained() -> UnconstrainedSingleton:
    return _UNCONSTRAINED


def _canonicalize_partition(p: Any) -> Any:
    """A list is a tuple; an empty tuple is None; a one-name tuple is that name."""
    if isinstance(p, (list, tuple)):
        for q in p:
            if isinstance(q, (list, tuple)):
                raise ValueError("A tuple inside PartitionSpec cannot contain a nested tuple. "
                                 f"Got partition: {p} and the nested tuple: {q}")
        p = tuple(p)
        if not p:
            return None
        if len(p) == 1:
            return p[0]
    return p


def _as_frozenset(axes: Any, name: str) -> frozenset:
    if isinstance(axes, frozenset):
        return axes
    if not isinstance(axes, set):
        raise TypeError(f"{name} argument of PartitionSpec should of type `frozenset` or `set`. "
                        f"Got type {axes}")
    return frozenset(axes)


def _check_reduced(partitions: tuple, unreduced: frozenset, reduced: frozenset) -> None:
    if None in unreduced:
        raise ValueError("unreduced cannot contain None. All elements in unreduced should refer"
                         " to the mesh axes.")
    if None in reduced:
        raise ValueError("reduced cannot contain None. All elements in reduced should refer to "
                         "the mesh axes.")
    if unreduced & reduced:
        raise ValueError("`unreduced` and `reduced` argument to PartitionSpec cannot overlap. "
                         f"Got unreduced: {unreduced} and reduced: {reduced}")
    for partition in partitions:
        for p in partition if isinstance(partition, tuple) else (partition,):
            for axes, kind in ((unreduced, "unreduced"), (reduced, "reduced")):
                if p in axes:
                    raise ValueError(
                        f"partitions cannot overlap with {kind} axes passed to PartitionSpec. "
                        f"Got partitions: {partitions} and {kind} axes: {axes}")


class PartitionSpec:
    """Per array axis: the mesh axis (or tuple of axes) it is split over, None (replicated) or
    UNCONSTRAINED; `unreduced`/`reduced` name mesh axes holding partial sums / copies."""

    __slots__ = ("_partitions", "unreduced", "reduced", "__weakref__")

    UNCONSTRAINED = _UNCONSTRAINED

    def __init__(self, *partitions: Any, unreduced: Any = frozenset(),
                 reduced: Any = frozenset()):
        parts = tuple(_canonicalize_partition(p) for p in partitions)
        unreduced = _as_frozenset(unreduced, "unreduced")
        reduced = _as_frozenset(reduced, "reduced")
        if unreduced or reduced:
            _check_reduced(parts, unreduced, reduced)
        object.__setattr__(self, "_partitions", parts)
        object.__setattr__(self, "unreduced", unreduced)
        object.__setattr__(self, "reduced", reduced)

    def __init_subclass__(cls, *args: Any, **kwargs: Any) -> None:
        raise TypeError("Subclassing `jax.P` is prohibited.")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field '{name}'")

    @property
    def partitions(self) -> tuple:
        return self._partitions

    def _key(self) -> tuple:
        return (self._partitions, self.unreduced, self.reduced)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PartitionSpec) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __reduce__(self) -> Any:
        return (_make_spec, self._key())

    def __repr__(self) -> str:
        parts = repr(self._partitions)[1:-1]
        if not self.unreduced and not self.reduced:
            return f"P({parts})"
        extras = []
        if self.unreduced:
            extras.append(f"unreduced={set(self.unreduced)!r}")
        if self.reduced:
            extras.append(f"reduced={set(self.reduced)!r}")
        parts = "" if not parts else f"{parts} " if parts.endswith(",") else f"{parts}, "
        return f"P({parts}{', '.join(extras)})"

    def _refuse_if_reduced(self, what: str, use: str) -> None:
        if self.reduced or self.unreduced:
            raise ValueError(f"Using {what} is dangerous when PartitionSpec has non-empty "
                             f"unreduced/reduced set. Please use {use}")

    def __getitem__(self, i: Any) -> Any:
        self._refuse_if_reduced("pspec[...]", "spec.partitions[...]")
        return self._partitions[i]

    def __iter__(self) -> Any:
        self._refuse_if_reduced("*pspec", "*spec.partitions")
        return iter(self._partitions)

    def __len__(self) -> int:
        return len(self._partitions)

    def __add__(self, other: Any) -> "PartitionSpec":
        if isinstance(other, PartitionSpec):
            return PartitionSpec(*self._partitions, *other._partitions,
                                 unreduced={*self.unreduced, *other.unreduced},
                                 reduced={*self.reduced, *other.reduced})
        if isinstance(other, tuple):
            self._refuse_tuple(other, "__add__")
            return PartitionSpec(*self, *other)
        raise NotImplementedError

    def __radd__(self, other: Any) -> "PartitionSpec":
        if not isinstance(other, tuple):
            raise NotImplementedError
        self._refuse_tuple(other, "__radd__")
        return PartitionSpec(*other, *self)

    def _refuse_tuple(self, other: tuple, method: str) -> None:
        for kind in ("unreduced", "reduced"):
            if getattr(self, kind):
                raise TypeError(f"other {other} cannot be of instance `tuple` when self {self} "
                                f"has {kind} in `{method}` of PartitionSpec.")

    def index(self, value: Any) -> int:
        return self._partitions.index(_canonicalize_partition(value))

    def count(self, value: Any) -> int:
        return self._partitions.count(_canonicalize_partition(value))

    def update(self, partitions: Any = None, unreduced: Any = None, reduced: Any = None
               ) -> "PartitionSpec":
        return PartitionSpec(*(self._partitions if partitions is None else partitions),
                             unreduced=self.unreduced if unreduced is None else unreduced,
                             reduced=self.reduced if reduced is None else reduced)

    def _normalized_spec_for_aval(self, ndim: int) -> "PartitionSpec":
        """UNCONSTRAINED read as None, padded with None to `ndim` entries."""
        out = [None if p is _UNCONSTRAINED else p for p in self._partitions]
        out += [None] * (ndim - len(out))
        return self.update(partitions=out)


def _make_spec(partitions: tuple, unreduced: frozenset, reduced: frozenset) -> PartitionSpec:
    return PartitionSpec(*partitions, unreduced=unreduced, reduced=reduced)


PartitionSpec.__module__ = "jax"
PartitionSpec.__name__ = PartitionSpec.__qualname__ = "P"
P = PartitionSpec


def flatten_spec(spec: PartitionSpec) -> list:
    """Every mesh axis (or None/UNCONSTRAINED) named by `spec`, entries' tuples spread out."""
    out: list = []
    for s in spec.partitions:
        out.extend(s if isinstance(s, tuple) else (s,))
    return out


def _dim_axes(entry: Any) -> tuple:
    """The mesh axes one spec entry splits its array axis over (major to minor)."""
    if entry is None or entry is _UNCONSTRAINED:
        return ()
    return entry if isinstance(entry, tuple) else (entry,)


# -- Shardings --------------------------------------------------------------------------------

class Sharding:
    """How an Array is laid out over devices: the base of every sharding."""

    def _type_sharding(self, rank: int) -> Any:
        """What an array laid out this way carries in its type: nothing, but for a
        NamedSharding over Explicit mesh axes (parallel/explicit.py)."""
        return None

    @property
    def device_set(self) -> set:
        raise NotImplementedError("Subclasses should implement this method.")

    @property
    def is_fully_replicated(self) -> bool:
        raise NotImplementedError("Subclasses should implement this method.")

    @property
    def is_fully_addressable(self) -> bool:
        raise NotImplementedError("Subclasses should implement this method.")

    @property
    def num_devices(self) -> int:
        raise NotImplementedError("Subclasses should implement this method.")

    @property
    def memory_kind(self) -> str | None:
        raise NotImplementedError("Subclasses should implement this method.")

    def with_memory_kind(self, kind: str) -> "Sharding":
        raise NotImplementedError("Subclasses should implement this method")

    @property
    def _device_assignment(self) -> tuple:
        raise NotImplementedError("Subclasses should implement this method.")

    def _tiling(self, ndim: int) -> list[tuple]:
        """Per array axis, the mesh axes splitting it (all replicated by default)."""
        return [()] * ndim

    # -- shared implementations -----------------------------------------------------------
    @property
    def _is_concrete(self) -> bool:
        return True

    @property
    def addressable_devices(self) -> set:
        return self.device_set  # one process addresses every device

    @property
    def has_addressable_devices(self) -> bool:
        return bool(self.device_set)

    def addressable_devices_indices_map(self, global_shape: Shape) -> Mapping[Any, Index]:
        return self.devices_indices_map(global_shape)

    def devices_indices_map(self, global_shape: Shape) -> Mapping[Any, Index]:
        return _devices_indices_map(self, tuple(global_shape))

    def shard_shape(self, global_shape: Shape) -> Shape:
        return _shard_shape(self, tuple(global_shape))

    def is_equivalent_to(self, other: "Sharding", ndim: int) -> bool:
        """Whether both place the same slices on the same devices (in the same memory)."""
        return (self._device_assignment == other._device_assignment
                and self.memory_kind == other.memory_kind
                and _placement(self, ndim) == _placement(other, ndim))


def _split_counts(sharding: Sharding, ndim: int) -> list[int]:
    sizes = sharding._axis_sizes()
    return [math.prod(sizes[a] for a in axes) for axes in sharding._tiling(ndim)]


def _placement(sharding: Sharding, ndim: int) -> tuple:
    """Which block each device holds along each axis (what equivalence compares)."""
    counts = _split_counts(sharding, ndim)
    return tuple((d, _block_coords(sharding, d, ndim)) if any(c > 1 for c in counts) else d
                 for d in sharding._device_assignment)


@functools.lru_cache(maxsize=4096)
def _shard_shape(sharding: Sharding, shape: Shape) -> Shape:
    counts = _split_counts(sharding, len(shape))
    if all(c == 1 for c in counts):
        return shape
    out = []
    for dim, (size, parts) in enumerate(zip(shape, counts)):
        quotient, remainder = divmod(size, parts)
        if remainder:
            raise IndivisibleError(
                f"Sharding {sharding} implies that array axis {dim} is partitioned {parts} "
                f"times, but the dimension size is {size} (full shape: {shape}, per-dimension "
                f"tiling factors: {counts} should evenly divide the shape)")
        out.append(quotient)
    return tuple(out)


def _block_coords(sharding: Sharding, device: Any, ndim: int) -> tuple[int, ...]:
    """Along each array axis, the block `device` holds: its coordinates on the splitting mesh
    axes read as one mixed-radix number, the first axis named most significant."""
    coords = sharding._mesh_coords(device)
    sizes = sharding._axis_sizes()
    out = []
    for axes in sharding._tiling(ndim):
        block = 0
        for a in axes:
            block = block * sizes[a] + coords[a]
        out.append(block)
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def _devices_indices_map(sharding: Sharding, shape: Shape) -> dict:
    block_shape = _shard_shape(sharding, shape)
    counts = _split_counts(sharding, len(shape))
    out = {}
    for device in sharding._device_assignment:
        blocks = _block_coords(sharding, device, len(shape)) if block_shape != shape else ()
        out[device] = tuple(
            slice(None) if parts == 1 else slice(b * n, (b + 1) * n)
            for parts, b, n in zip(counts, blocks or (0,) * len(shape), block_shape))
    return out


def replica_ids(sharding: Sharding, shape: Shape) -> dict:
    """Per device, how many devices before it (in assignment order) hold the same slice."""
    seen: collections.Counter = collections.Counter()
    out = {}
    for device, index in sharding.devices_indices_map(shape).items():
        key = tuple((s.start, s.stop) for s in index)
        out[device] = seen[key]
        seen[key] += 1
    return out


def _canonical_memory_kind(memory_kind: str | None, device: Any) -> str:
    if memory_kind is None:
        return "device"
    if memory_kind not in MEMORY_KINDS:
        raise ValueError(
            f"Could not find memory addressable by device {device.device_kind}. Device "
            f"{device.device_kind} can address the following memory kinds: "
            f"{', '.join(MEMORY_KINDS)}. Got memory kind: {memory_kind}")
    if memory_kind == "pinned_host":  # arrays placed by it are typed `f32<host>[4]`
        from pyjax._src import memory
        memory.activate()
        global placements_in_use
        placements_in_use = True
    return memory_kind


class SingleDeviceSharding(Sharding):
    """An array held whole by one device."""

    def __init__(self, device: Any, *, memory_kind: str | None = None):
        self._device = device
        self._memory_kind = _canonical_memory_kind(memory_kind, device)

    def __reduce__(self) -> Any:
        return (_single_device_sharding, (self._device, self._memory_kind))

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self._memory_kind})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, SingleDeviceSharding) and other._device == self._device
                and other._memory_kind == self._memory_kind)

    def __hash__(self) -> int:
        return hash((self._device, self._memory_kind))

    @property
    def num_devices(self) -> int:
        return 1

    @property
    def device_set(self) -> set:
        return {self._device}

    @property
    def memory_kind(self) -> str:
        return self._memory_kind

    def with_memory_kind(self, kind: str) -> "SingleDeviceSharding":
        return SingleDeviceSharding(self._device, memory_kind=kind)

    @property
    def _device_assignment(self) -> tuple:
        return (self._device,)

    def _axis_sizes(self) -> dict:
        return {}

    def _mesh_coords(self, device: Any) -> dict:
        return {}

    def devices_indices_map(self, global_shape: Shape) -> Mapping[Any, Index]:
        return {self._device: (slice(None),) * len(global_shape)}

    @property
    def is_fully_replicated(self) -> bool:
        return True

    @property
    def is_fully_addressable(self) -> bool:
        return True

    def check_compatible_aval(self, aval_shape: Shape) -> None:
        return None


SingleDeviceSharding.__module__ = "jax.sharding"


def _single_device_sharding(device: Any, memory_kind: str) -> SingleDeviceSharding:
    return SingleDeviceSharding(device, memory_kind=memory_kind)


def make_single_device_sharding(device: Any, *, memory_kind: str | None = None
                                ) -> SingleDeviceSharding:
    return SingleDeviceSharding(device, memory_kind=memory_kind)


#: whether a NamedSharding or a sharding into host memory was ever made in this process:
#: until then no array is laid out over a mesh or typed in host memory, and jit's common call
#: need not look at its arguments' shardings (which its cache key would otherwise miss)
placements_in_use = False


class NamedSharding(Sharding):
    """A mesh and a PartitionSpec: array axis i is split over the mesh axes `spec[i]` names."""

    def __init__(self, mesh: Mesh | AbstractMesh, spec: PartitionSpec, *,
                 memory_kind: str | None = None, _logical_device_ids: Any = None):
        global placements_in_use
        placements_in_use = True
        if spec is None:
            raise TypeError(
                "__init__(): incompatible function arguments. The following argument types are "
                "supported:\n    1. __init__(self, mesh: object, spec: object, memory_kind: "
                "object | None = None, _logical_device_ids: object | None = None) -> None\n\n"
                "Invoked with types: jax.sharding.NamedSharding, "
                f"jax._src.mesh.{type(mesh).__name__}, NoneType")
        if not isinstance(spec, PartitionSpec):
            raise AttributeError(f"'{type(spec).__name__}' object has no attribute 'partitions'")
        self.mesh = mesh
        self.spec = spec
        if isinstance(mesh, Mesh) and not mesh.empty:
            memory_kind = _canonical_memory_kind(memory_kind, mesh.devices.flat[0])
        self._memory_kind = memory_kind
        self._logical_device_ids = _logical_device_ids
        _check_pspec(mesh, spec)

    def _type_sharding(self, rank: int) -> Any:
        from pyjax._src.parallel.explicit import of_sharding
        return of_sharding(self, rank)

    def __repr__(self) -> str:
        mem = "" if self._memory_kind is None else f", memory_kind={self._memory_kind}"
        ids = ("" if self._logical_device_ids is None
               else f", logical_device_ids={self._logical_device_ids}")
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec}{mem}{ids})"

    def __reduce__(self) -> Any:
        return (_named_sharding, (self.mesh, self.spec, self._memory_kind,
                                  self._logical_device_ids))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NamedSharding):
            return False
        return (self is other or (self.spec == other.spec
                                  and self._memory_kind == other._memory_kind
                                  and self._logical_device_ids == other._logical_device_ids
                                  and self.mesh == other.mesh))

    def __hash__(self) -> int:
        return hash((self.mesh, self._memory_kind, self.spec, self._logical_device_ids))

    @property
    def memory_kind(self) -> str | None:
        return self._memory_kind

    def _refuse_abstract(self, what: str) -> None:
        if isinstance(self.mesh, AbstractMesh):
            raise ValueError(f"{what} is not implemented for `jax.sharding.AbstractMesh`.")

    @property
    def num_devices(self) -> int:
        return self.mesh.size

    @property
    def device_set(self) -> set:
        self._refuse_abstract("device_set")
        return set(self.mesh._flat_devices_set)

    @property
    def addressable_devices(self) -> set:
        self._refuse_abstract("addressable_devices")
        return set(self.mesh._flat_devices_set)

    @property
    def _device_assignment(self) -> tuple:
        if isinstance(self.mesh, AbstractMesh):
            raise ValueError("_device_assignment is not implemented for "
                             "`jax.sharding.AbstractMesh`.")
        return self.mesh._flat_devices_tuple

    @property
    def is_fully_addressable(self) -> bool:
        if isinstance(self.mesh, AbstractMesh):
            raise ValueError("is_fully_addressable is not implemented for "
                             "`jax.sharding.AbstractMesh`.")
        return True

    @property
    def _is_concrete(self) -> bool:
        return not isinstance(self.mesh, AbstractMesh)

    @property
    def is_fully_replicated(self) -> bool:
        if self.mesh.size == 1:
            return True
        if self.spec.unreduced:
            return False
        sizes = dict(self.mesh.shape_tuple)
        return math.prod(sizes[a] for a in flatten_spec(self.spec)
                         if a is not None and a is not _UNCONSTRAINED) == 1

    @property
    def replicated_axes(self) -> frozenset:
        named = frozenset(a for a in flatten_spec(self.spec)
                          if a is not None and a is not _UNCONSTRAINED)
        return frozenset(self.mesh.axis_names) - (named | self.spec.unreduced
                                                  | self.spec.reduced)

    def with_memory_kind(self, kind: str) -> "NamedSharding":
        return self.update(memory_kind=kind)

    def update(self, **kwargs: Any) -> "NamedSharding":
        spec = kwargs.pop("spec", self.spec)
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec)
        return NamedSharding(kwargs.pop("mesh", self.mesh), spec,
                             memory_kind=kwargs.pop("memory_kind", self._memory_kind),
                             _logical_device_ids=kwargs.pop("_logical_device_ids",
                                                            self._logical_device_ids))

    def check_compatible_aval(self, aval_shape: Shape) -> None:
        if len(aval_shape) < len(self.spec):
            extra = " For scalars the PartitionSpec should be P()" if not aval_shape else ""
            raise ValueError(
                f"Sharding {self} is only valid for values of rank at least {len(self.spec)}, "
                f"but was applied to a value of rank {len(aval_shape)}.{extra}")

    def _tiling(self, ndim: int) -> list[tuple]:
        sizes = self._axis_sizes()
        tiling = [tuple(a for a in _dim_axes(e) if sizes[a] != 1)
                  for e in self.spec.partitions]
        if any(tiling[ndim:]):  # an axis past the array's rank splits it (size-1 ones do not)
            raise IndexError("list index out of range")
        return tiling[:ndim] + [()] * (ndim - len(tiling))

    def _axis_sizes(self) -> dict:
        return dict(self.mesh.shape_tuple)

    def _mesh_coords(self, device: Any) -> dict:
        return _mesh_coords(self.mesh)[device]


NamedSharding.__module__ = "jax.sharding"


@functools.lru_cache(maxsize=256)
def _mesh_coords(mesh: Mesh) -> dict:
    """Per device of `mesh`, its coordinate along each mesh axis."""
    out = {}
    for pos, device in zip(_positions(mesh.devices.shape), mesh.devices.flat):
        out[device] = dict(zip(mesh.axis_names, pos))
    return out


def _positions(shape: tuple) -> list[tuple]:
    import numpy as np
    return [tuple(int(i) for i in p) for p in np.ndindex(*shape)]


def _named_sharding(mesh: Any, spec: PartitionSpec, memory_kind: Any, ids: Any
                    ) -> NamedSharding:
    return NamedSharding(mesh, spec, memory_kind=memory_kind, _logical_device_ids=ids)


@functools.lru_cache(maxsize=256)
def _check_pspec(mesh: Any, spec: PartitionSpec) -> None:
    """JAX's checks of a spec against its mesh: no mesh axis used twice, every axis named is
    the mesh's, UNCONSTRAINED only with Auto axes, (un)reduced axes Explicit."""
    counts: collections.Counter = collections.Counter()
    for entry in spec.partitions:
        counts.update(_dim_axes(entry))
    if any(c > 1 for c in counts.values()):
        raise DuplicateSpecError(
            "A single NamedSharding spec specification can map every mesh axis to at most one "
            f"positional dimension, but {spec} has duplicate entries for "
            f"{show_axes([a for a, c in counts.items() if c > 1])}", mesh, spec)
    for entry in spec.partitions:
        for axis in _dim_axes(entry):
            if axis not in mesh.axis_names:
                raise ValueError(f"Resource axis: {axis} of {spec} is not found in mesh: "
                                 f"{tuple(mesh.shape.keys())}.")
    if AxisType.Auto not in mesh.axis_types and _UNCONSTRAINED in spec.partitions:
        raise ValueError(f"{spec} cannot contain `P.UNCONSTRAINED` when no mesh axis_types are "
                         f"`Auto`. Got mesh axis_types: {mesh.axis_types}")
    for kind, axes in (("Unreduced", spec.unreduced), ("Reduced", spec.reduced)):
        for u in axes:
            if u not in mesh.axis_names:
                raise ValueError(f"{kind} axes {u} is not found in mesh.axis_names="
                                 f"{mesh.axis_names}. Got pspec={spec}")
            if mesh._name_to_type[u] in (AxisType.Auto, AxisType.Manual):
                raise ValueError(f"{kind} axes can only refer to mesh axes that is of type "
                                 f"`Explicit`. Got {kind.lower()} axes: {axes} and mesh: {mesh}")


# -- Shards of an array -----------------------------------------------------------------------

class Shard:
    """One device's piece of an Array: its device, its index into the whole array, which
    replica of that slice it is, and its data (an Array on that device)."""

    def __init__(self, device: Any, sharding: Sharding, global_shape: Shape, data: Any = None):
        self._device = device
        self._sharding = sharding
        self._global_shape = global_shape
        self._data = data

    def __repr__(self) -> str:
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data})")

    @functools.cached_property
    def index(self) -> Index:
        return self._sharding.devices_indices_map(self._global_shape)[self._device]

    @functools.cached_property
    def replica_id(self) -> int:
        return replica_ids(self._sharding, self._global_shape)[self._device]

    @property
    def device(self) -> Any:
        return self._device

    @property
    def data(self) -> Any:
        return self._data


def placed(x: Any, sharding: Sharding) -> Any:
    """The concrete array `x` (its buffer shared, not copied) laid out as `sharding` says:
    committed, as arrays placed explicitly are."""
    from pyjax._src.core.array import ArrayImpl
    out = ArrayImpl(x._buf, x._weak)
    out._sharding = sharding
    out._committed = True
    if type(sharding) is NamedSharding:
        from pyjax._src.parallel.eager_layout import track
        track(out)
    return out


def unplaced(x: Any) -> Any:
    """`x` held by the default device, even if made under a mesh (`set_mesh` lays new arrays
    out on it: parallel/mesh.py), where JAX leaves such an array unplaced."""
    if getattr(x, "_sharding", None) is not None:
        x._sharding = None
    return x


def shards_of(x: Any) -> list[Shard]:
    """The addressable shards of the concrete array `x`: per device its slice (a view of the
    one host buffer), an array committed to that device."""
    from pyjax._src.core.array import ArrayImpl
    sharding = x.sharding
    if isinstance(sharding, SingleDeviceSharding):  # the shard's data is the array itself
        return [Shard(sharding._device, sharding, x.shape, x)]
    out = []
    for device, index in sharding.addressable_devices_indices_map(x.shape).items():
        data = ArrayImpl(x._buf[index], x._weak)
        data._sharding = SingleDeviceSharding(device, memory_kind=sharding.memory_kind)
        data._committed = True
        out.append(Shard(device, sharding, x.shape, data))
    return out
