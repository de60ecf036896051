"""Abstract values: what a tracer knows about an array (shape, dtype, weak type), not its data."""
from __future__ import annotations

import enum
from typing import Any, Callable

import numpy as np

from pyjax._src.core import dtypes


class AbstractValue:
    """Base of abstract values (JAX's `jax.core.AbstractValue`)."""

    __slots__ = ()


#: Abstract values of Python types that are not arrays (mutable references, hijax types):
#: {type: value -> aval}, JAX's `core.pytype_aval_mappings`; `abstractify` consults it.
pytype_aval_mappings: dict[type, Callable[[Any], AbstractValue]] = {}


class MemorySpace(enum.Enum):
    """Where an array's buffer lives (JAX's `jax.memory.Space`); a type not in device memory
    says so (`f32<host>[4]`).  Hashed by identity, as JAX's."""
    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()

    def __repr__(self) -> str:
        return f"MemorySpace.{self.name}"

    __hash__ = object.__hash__


_DEVICE = MemorySpace.Device


def _memory_space_seen() -> None:
    """A type outside device memory exists: staging types equations by memory space from now
    on (pyjax/_src/memory.py)."""
    from pyjax._src import memory
    memory.activate()


class ManualAxisType:
    """How a value of a shard_map body varies over its manual mesh axes (JAX's
    `core.ManualAxisType`): `varying` names them; pyjax has no unreduced or reduced values."""

    __slots__ = ("varying", "unreduced", "reduced")

    def __init__(self, varying: frozenset = frozenset()):
        self.varying = frozenset(varying)
        self.unreduced = self.reduced = frozenset()

    @property
    def empty(self) -> bool:
        return not self.varying

    def __repr__(self) -> str:
        return (f"ManualAxisType(varying={self.varying}, unreduced={self.unreduced}, "
                f"reduced={self.reduced})")


class ShapedArray(AbstractValue):
    """The abstract value of an array: `f32[3]` in a jaxpr; equal avals mean the same trace.

    `vma` names, in mesh order, the manual axes a shard_map body's value varies over (with
    check_vma): printed `f32[3]{V:i}` and read as `manual_axis_type`.  `explicit_sharding`,
    when the value is split over Explicit mesh axes, is a NamedSharding over the abstract mesh
    naming only those axes: printed `f32[6@i]`, its spec read back by shard_map and
    propagated through equations by parallel/explicit.py.  Unlike JAX, types that differ only
    in these compare equal: pyjax checks varying axes once per body (vma.py) and lays results
    out by propagation, so control flow never rejects a program over them.  `memory_space`
    (device memory unless a `MemorySpace` says otherwise, `f32<host>[4]`) is part of
    equality, as in JAX."""

    __slots__ = ("shape", "dtype", "weak_type", "vma", "explicit_sharding", "memory_space",
                 "_hash")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype, weak_type: bool = False,
                 vma: tuple = (), sharding: Any = None, *,
                 memory_space: MemorySpace = _DEVICE):
        self.shape = tuple(shape)
        if type(dtype) is not np.dtype and not isinstance(dtype, dtypes.ExtendedDType):
            dtype = np.dtype(dtype)  # a scalar type such as jnp.float32, as JAX accepts
        self.dtype = dtype
        self.weak_type = bool(weak_type)
        self.vma = vma
        self.explicit_sharding = sharding
        self.memory_space = memory_space
        if memory_space is _DEVICE:
            self._hash = hash((self.shape, self.dtype, self.weak_type))
        else:
            self._hash = hash((self.shape, self.dtype, self.weak_type, memory_space))
            _memory_space_seen()

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def update(self, shape=None, dtype=None, weak_type=None, vma=None,
               sharding=None, memory_space=None) -> "ShapedArray":
        """A copy with the given fields replaced; a new shape drops the sharding (its spec
        was for the old axes) unless one is given."""
        if sharding is None and (shape is None or tuple(shape) == self.shape):
            sharding = self.explicit_sharding
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type,
                           self.vma if vma is None else vma, sharding,
                           memory_space=(self.memory_space if memory_space is None
                                         else memory_space))

    @property
    def manual_axis_type(self) -> ManualAxisType:
        return ManualAxisType(frozenset(self.vma))

    @property
    def sharding(self) -> "Any":
        """How the value is split over Explicit mesh axes, as part of its type (JAX's default
        when it is not: unsharded over an empty abstract mesh)."""
        if self.explicit_sharding is not None:
            return self.explicit_sharding
        from pyjax._src.parallel.mesh import AbstractMesh
        from pyjax._src.parallel.sharding import NamedSharding, PartitionSpec
        return NamedSharding(AbstractMesh((), (), axis_types=()),
                             PartitionSpec(*[None] * len(self.shape)))

    def to_tangent_aval(self) -> "ShapedArray":
        """The type of this value's tangents (float0 for integers and booleans)."""
        if dtypes.is_inexact(self.dtype):
            return self
        return self.update(dtype=dtypes.float0, weak_type=False)

    def strip_weak_type(self) -> "ShapedArray":
        return self if not self.weak_type else self.update(weak_type=False)

    def str_short(self, short_dtypes: bool = False) -> str:
        name = dtypes.short_dtype_name(self.dtype) if short_dtypes else dtypes.dtype_name(self.dtype)
        split = (self.explicit_sharding.spec if self.explicit_sharding is not None
                 else (None,) * len(self.shape))
        if self.memory_space is not _DEVICE:
            name += f"<{self.memory_space.name.lower()}>"
        text = f"{name}[{','.join(_dim_text(d, s) for d, s in zip(self.shape, split))}]"
        if self.vma:
            names = ",".join(map(str, self.vma))
            text += f"{{V:{names if len(self.vma) == 1 else '(' + names + ')'}}}"
        return text

    def __eq__(self, other: object) -> bool:
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self.memory_space is other.memory_space)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"

    def __str__(self) -> str:
        return ("~" if self.weak_type else "") + self.str_short()


def _dim_text(size: int, split: Any) -> str:
    """One axis of a type: `6`, or `6@i` / `6@(i,j)` when split over Explicit mesh axes."""
    if split is None:
        return str(size)
    if isinstance(split, tuple):
        return f"{size}@({','.join(split)})"
    return f"{size}@{split}"


def typematch(a: ShapedArray, b: ShapedArray) -> bool:
    """Same shape and dtype (weak types may differ)."""
    return a.shape == b.shape and a.dtype == b.dtype


def mismatch_extra(a: ShapedArray, b: ShapedArray) -> str:
    """The ", so the dtypes do not match" tail JAX's type errors add."""
    problems = []
    if a.dtype != b.dtype:
        problems.append("the dtypes do not match")
    if a.shape != b.shape:
        problems.append("the shapes do not match")
    if not problems:
        return ""
    if len(problems) == 1:
        return ", so " + problems[0]
    return ", so " + ", ".join(problems[:-1]) + ", and " + problems[-1]
