"""`AbstractRef`: the abstract value of a mutable array reference (`Ref{f32[3]}` in a jaxpr).

Tracers of this type route indexing to the reference primitives (`aval._getitem` and friends,
as JAX's Tracer forwards `__getitem__` to its aval), so `ref[...]` works the same on a traced
reference as on a concrete `Ref`.
"""
from __future__ import annotations

from typing import Any

from pyjax._src.core.avals import AbstractValue, ShapedArray
from pyjax._src.hijax.types import aval_method


class AbstractRef(AbstractValue):
    """A reference to a mutable array of type `inner_aval`."""

    __slots__ = ("inner_aval", "memory_space", "kind")
    is_high = False
    has_qdd = False

    def __init__(self, inner_aval: ShapedArray, memory_space: Any = None, kind: Any = None):
        self.inner_aval = inner_aval
        self.memory_space = memory_space
        self.kind = kind

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    ndim = property(lambda self: len(self.inner_aval.shape))
    size = property(lambda self: self.inner_aval.size)
    weak_type = False  # a reference is never weakly typed (its contents may be)

    def str_short(self, short_dtypes: bool = False, **_: Any) -> str:
        inner = self.inner_aval.str_short(short_dtypes)
        if self.memory_space is not None:
            return f"Ref<{self.memory_space}>{{{inner}}}"
        return f"Ref{{{inner}}}"

    def __str__(self) -> str:
        return self.str_short()

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return (type(other) is AbstractRef and self.inner_aval == other.inner_aval
                and self.memory_space == other.memory_space and self.kind == other.kind)

    def __hash__(self) -> int:
        return hash((AbstractRef, self.inner_aval, self.memory_space, self.kind))

    def to_tangent_aval(self) -> "AbstractRef":
        from pyjax._src.transforms.ad import tangent_aval
        return AbstractRef(tangent_aval(self.inner_aval), self.memory_space, self.kind)

    # -- what a traced reference does (the concrete `Ref` calls the same functions) ----------
    def _getitem(self, ref: Any, idx: Any) -> Any:
        from pyjax._src.state.ops import ref_get
        return ref_get(ref, idx)

    def _setitem(self, ref: Any, idx: Any, value: Any) -> None:
        from pyjax._src.state.ops import ref_set
        ref_set(ref, idx, value)

    def _addupdate(self, ref: Any, idx: Any, value: Any) -> None:
        from pyjax._src.state.ops import ref_addupdate
        ref_addupdate(ref, idx, value)

    @aval_method
    def addupdate(ref: Any, x: Any, idx: Any = ()) -> None:  # noqa: N805  (bound to the tracer)
        from pyjax._src.state.ops import ref_addupdate
        ref_addupdate(ref, idx, x)

    def _len(self, ref: Any) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]


class TransformedRef:
    """A view `ref` at the index expression `index` (JAX's `ref.at[index]`): `view[...]`
    reads and `view[...] = v` writes that part of the underlying reference."""

    __slots__ = ("ref", "index")

    def __init__(self, ref: Any, index: Any):
        self.ref, self.index = ref, index

    def _whole(self, idx: Any) -> Any:
        if idx is not Ellipsis and idx != ():
            raise IndexError("a transformed reference is read and written whole: use view[...]")
        return self.index

    def __getitem__(self, idx: Any) -> Any:
        from pyjax._src.state.ops import ref_get
        return ref_get(self.ref, self._whole(idx))

    def __setitem__(self, idx: Any, value: Any) -> None:
        from pyjax._src.state.ops import ref_set
        ref_set(self.ref, self._whole(idx), value)
