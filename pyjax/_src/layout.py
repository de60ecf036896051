"""Array layouts (`jax.experimental.layout`): the order of an array's axes in memory.  pyjax
keeps every buffer in NumPy's row-major order, which is JAX's default layout on the CPU; a
layout constraint leaves values unchanged, as in JAX, after checking it fits the value."""
from __future__ import annotations

from typing import Any

from pyjax._src.core.array import Array


class _AutoLayout:
    """`Layout.AUTO`: let the compiler choose."""

    def __repr__(self) -> str:
        return "AUTO"


class Layout:
    """Axes from most to least major in memory, with optional tiling."""

    __slots__ = ("major_to_minor", "tiling", "sub_byte_element_size_in_bits")
    AUTO = _AutoLayout()

    def __init__(self, major_to_minor: tuple[int, ...], tiling: Any = None,
                 sub_byte_element_size_in_bits: int = 0):
        self.major_to_minor = tuple(major_to_minor)
        self.tiling = None if tiling is None else tuple(tuple(t) for t in tiling)
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    def _key(self) -> tuple:
        return (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
                f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})")

    def check_compatible_aval(self, aval_shape: tuple[int, ...]) -> None:
        if len(self.major_to_minor) != len(aval_shape):
            raise ValueError("Length of major_to_minor and the rank of the value should match."
                             f" Got major_to_minor={self.major_to_minor} and "
                             f"shape={tuple(aval_shape)}")


def row_major(ndim: int) -> Layout:
    """The layout of every pyjax buffer (`Array.format.layout`)."""
    return Layout(tuple(range(ndim)), ())


class Format:
    """A layout together with a sharding: how an array is placed and laid out."""

    __slots__ = ("layout", "sharding")

    def __init__(self, layout: Any = None, sharding: Any = None):
        from pyjax._src.parallel.sharding import Sharding
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError("Sharding has to be concrete when layout is of type "
                             f"{type(layout)}. Please pass a `jax.sharding.NamedSharding` or "
                             "`jax.sharding.SingleDeviceSharding` to the sharding argument. "
                             f"Got sharding {sharding}")
        if not isinstance(layout, (Layout, type(None), _AutoLayout)):
            raise TypeError("Invalid value received for the layout argument. Expected values "
                            "are `None`, `Layout.AUTO` or an instance of `Layout`. Got "
                            f"{layout} of type {type(layout)}")
        if not isinstance(sharding, (Sharding, type(None))):
            raise TypeError("Invalid value received for the sharding argument. Expected values"
                            f" are `None` or an instance of `jax.Sharding`. Got {sharding} of "
                            f"type {type(sharding)}")
        self.layout, self.sharding = layout, sharding

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Format) and self.layout == other.layout
                and self.sharding == other.sharding)

    def __hash__(self) -> int:
        return hash((self.layout, self.sharding))

    def __repr__(self) -> str:
        return f"Format(layout={self.layout}, sharding={self.sharding})"


def with_layout_constraint(x: Any, layout: Layout) -> Any:
    """`x`, required to be laid out as `layout` (values are unchanged)."""
    if isinstance(layout, Layout):
        layout.check_compatible_aval(getattr(x, "shape", ()))
    return x


def array_format(x: Array) -> Format:
    """`Array.format`: row-major on its sharding."""
    return Format(row_major(x.ndim), x.sharding)
