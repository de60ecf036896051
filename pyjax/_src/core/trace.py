"""Stackless trace context: one current trace per thread, and the Tracer base class.

`None` as the current trace means eager evaluation (the fast path).  A transformation installs
its trace with `use_trace`, runs the user's function, and its `process_primitive` handles every
primitive bound meanwhile.  A trace that has finished is marked dead; its tracers then raise
UnexpectedTracerError when used (they leaked out of the transformation).
"""
from __future__ import annotations

import operator
import types
from typing import Any

from pyjax._src import errors
from pyjax._src.core.array import Array
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.trace_state import trace_state


_MISSING = object()


class use_trace:
    """Make `trace` current for the duration of a `with` block (a slotted class, not a
    generator: it is entered once per primitive under every transformation)."""

    __slots__ = ("trace", "previous")

    def __init__(self, trace: "Trace | None"):
        self.trace = trace

    def __enter__(self) -> None:
        self.previous = trace_state.trace
        trace_state.trace = self.trace

    def __exit__(self, *exc_info: Any) -> None:
        trace_state.trace = self.previous


class Trace:
    """Base of all traces.  Subclasses implement `process_primitive`."""

    alive = True
    #: whether functions run under this trace as they run eagerly (eager plans' recorder:
    #: custom derivatives call their function, jnp's jitted functions are not staged)
    eager_like = False

    def process_primitive(self, primitive: Any, args: tuple, params: dict) -> Any:
        raise NotImplementedError

    def finish(self) -> None:
        """Mark the trace dead: any tracer of it used from now on is a leak."""
        self.alive = False

    def side_effect(self) -> None:
        """Called when the function running under this trace does something other than bind
        primitives, such as warn (eager plans refuse to replay it)."""

    def describe_dependence(self, tracer: "Tracer") -> str:
        """Why `tracer` is not concrete (the paragraph tracer errors print)."""
        return ""

    def describe_leak(self, tracer: "Tracer") -> tuple[str, tuple]:
        """(which traced function leaked it, user frames where it was created)."""
        return "", ()


def check_alive(tracer: "Tracer") -> None:
    """Raise UnexpectedTracerError if `tracer`'s transformation has already finished."""
    trace = tracer._trace
    if not trace.alive:
        raise errors.UnexpectedTracerError(tracer, lambda: trace.describe_leak(tracer))


def _conversion_error(fun: str) -> Any:
    """ConcretizationTypeError for `int(tracer)` and friends, naming the Python function."""
    def make(tracer: "Tracer") -> errors.ConcretizationTypeError:
        return errors.ConcretizationTypeError(
            tracer, f"The problem arose with the `{fun}` function. If trying to convert the "
                    f"data type of a value, try using `x.astype({fun})` or `jnp.array(x, {fun})` "
                    "instead.")
    return make


class Tracer(Array):
    """A stand-in for an array while a transformation runs; knows only its abstract value."""

    __slots__ = ("_trace",)

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> Any:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    def concrete_value(self) -> Any:
        """The value as a NumPy array if this tracer knows it (e.g. a JVP primal), else None."""
        return None

    def _concrete_or(self, error: type) -> Any:
        value = self.concrete_value()
        if value is None:
            raise error(self)
        return value

    def __bool__(self) -> bool:
        return bool(self._concrete_or(errors.TracerBoolConversionError))

    def __int__(self) -> int:
        return int(self._concrete_or(_conversion_error("int")))

    def __index__(self) -> int:
        return operator.index(self._concrete_or(errors.TracerIntegerConversionError))

    def __float__(self) -> float:
        return float(self._concrete_or(_conversion_error("float")))

    def __complex__(self) -> complex:
        return complex(self._concrete_or(_conversion_error("complex")))

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        raise errors.TracerArrayConversionError(self)

    def tolist(self) -> Any:
        raise errors.ConcretizationTypeError(self, "The tolist() method was called on a tracer.")

    def item(self, *args: Any) -> Any:
        raise errors.ConcretizationTypeError(self, "The item() method was called on a tracer.")

    __hash__ = None  # type: ignore[assignment]

    # -- tracers of non-array types (references, hijax types) defer to their aval, as JAX's
    # Tracer does: `aval._getitem(tracer, idx)`, `aval_property` / `aval_method` attributes
    def __getitem__(self, idx: Any) -> Any:
        aval = self.aval
        if type(aval) is ShapedArray:
            return Array.__getitem__(self, idx)  # type: ignore[attr-defined]  (array_methods)
        return aval._getitem(self, idx)

    def __setitem__(self, idx: Any, value: Any) -> None:
        aval = self.aval
        if type(aval) is ShapedArray:
            from pyjax._src.core.array import ArrayImpl
            return ArrayImpl.__setitem__(self, idx, value)  # type: ignore[arg-type]
        return aval._setitem(self, idx, value)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("aval", "_trace"):
            raise AttributeError(name)
        attr = getattr(self.aval, name, _MISSING)
        kind = getattr(type(attr), "_aval_attribute", None)
        if kind == "property":
            return attr.fget(self)
        if kind == "method":
            return types.MethodType(attr.fun, self)
        if attr is _MISSING or type(self.aval) is ShapedArray:
            raise AttributeError(f"{type(self).__name__} has no attribute {name}")
        return attr

    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __repr__(self) -> str:
        return f"{self.tracer_name}({self.aval})"

    tracer_name = "Tracer"
