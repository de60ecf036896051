"""JAX's rule registries (`ad.primitive_jvps`, `batching.primitive_batchers`, ...) as views of
the rule attributes of pyjax's Primitive: registering a rule sets the attribute, so the
Primitive stays the one place where a rule lives.

Rule conventions are JAX's and pyjax's alike: jvp(primals, tangents, **params) -> (out,
tangent), transpose(ct, *args, **params) -> cotangents, batch(vals, dims, **params) -> (out,
dims).  Only the "fancy" batchers, which receive the mapped axis, are adapted here.
"""
from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, Callable, Iterator

from pyjax._src.core.primitive import Primitive


class RuleTable(MutableMapping):
    """A dict-like view {primitive: rule} of one rule attribute of every primitive."""

    def __init__(self, attribute: str, *, to_rule: Callable | None = None,
                 from_rule: Callable | None = None):
        self.attribute = attribute
        self._to_rule = to_rule or (lambda prim, rule: rule)
        self._from_rule = from_rule or (lambda prim, rule: rule)
        self._primitives: dict[int, Primitive] = {}  # every primitive registered through us

    def _known(self) -> list[Primitive]:
        from pyjax._src.core.primitive import registry
        from pyjax._src.lazy_loader import load_deferred
        load_deferred()  # every family's primitives, whichever `import pyjax` left unloaded
        return list({id(p): p for p in [*registry.values(), *self._primitives.values()]}
                    .values())

    def __getitem__(self, prim: Primitive) -> Callable:
        rule = getattr(prim, self.attribute, None) if isinstance(prim, Primitive) else None
        if rule is None:
            raise KeyError(prim)
        return self._from_rule(prim, rule)

    def __setitem__(self, prim: Primitive, rule: Callable) -> None:
        setattr(prim, self.attribute, self._to_rule(prim, rule))
        self._primitives[id(prim)] = prim

    def __delitem__(self, prim: Primitive) -> None:
        if getattr(prim, self.attribute, None) is None:
            raise KeyError(prim)
        setattr(prim, self.attribute, None)

    def __iter__(self) -> Iterator[Primitive]:
        return iter([p for p in self._known() if getattr(p, self.attribute, None) is not None])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"<rules {self.attribute!r} of {len(self)} primitives>"


class AxisData:
    """What JAX's "fancy" batching rules receive about the mapped axis."""

    __slots__ = ("name", "size", "spmd_name", "explicit_mesh_axis")

    def __init__(self, name: Any, size: int, spmd_name: Any = None):
        self.name, self.size, self.spmd_name = name, size, spmd_name
        self.explicit_mesh_axis = None

    def __repr__(self) -> str:
        return f"AxisData(name={self.name!r}, size={self.size})"


def fancy_batcher(prim: Primitive, rule: Callable) -> Callable:
    """`rule(axis_data, vals, dims, **params)` as pyjax's batch_collective slot, which sees
    the batch trace (for the axis) and runs even when no operand is batched, as JAX's does."""
    def batch_collective(trace: Any, vals: list, dims: list, **params: Any) -> Any:
        return rule(AxisData(trace.axis_name, trace.axis_size), vals, dims, **params)
    batch_collective.rule = rule
    return batch_collective


def axis_batcher(prim: Primitive, rule: Callable) -> Callable:
    """JAX's older `axis_primitive_batchers` form: rule(size, name, trace_type, vals, dims)."""
    return fancy_batcher(prim, lambda axis, vals, dims, **params: rule(
        axis.size, axis.name, None, vals, dims, **params))


def _unwrap_fancy(prim: Primitive, slot: Callable) -> Callable:
    return getattr(slot, "rule", slot)
