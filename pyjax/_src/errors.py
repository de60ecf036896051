"""JAX's error classes.  Messages are assembled only when printed (`str(err)`), never at raise time.

Each tracer error keeps the tracer and a `describe` callback of the trace that made it; the
callback names the traced function, where it was defined, and which arguments the value depends on.
"""
from __future__ import annotations

from typing import Any, Callable

_DOCS = "https://docs.jax.dev/en/latest/errors.html"


class _LazyMessage:
    """Mixin: the message is the result of `self._build()`, computed once on first use."""

    _text: str | None = None

    def _build(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        if self._text is None:
            self._text = self._build()
        return self._text


class JAXTypeError(_LazyMessage, TypeError):
    """Base of JAX's TypeErrors (the tracer conversion errors)."""

    def __init__(self, message: str | None = None):
        super().__init__()
        if message is not None:
            self._text = message


class JAXIndexError(_LazyMessage, IndexError):
    """Base of JAX's IndexErrors."""

    def __init__(self, message: str | None = None):
        super().__init__()
        if message is not None:
            self._text = message


def _tracer_context(tracer: Any) -> str:
    """'The error occurred while tracing ...' paragraph for a tracer (empty if unknown)."""
    describe = getattr(getattr(tracer, "_trace", None), "describe_dependence", None)
    text = describe(tracer) if describe is not None else ""
    return "\n" + text if text else ""


class ConcretizationTypeError(JAXTypeError):
    """A concrete Python value was needed from a traced (abstract) array."""

    def __init__(self, tracer: Any, context: str = ""):
        super().__init__()
        self.tracer, self.context = tracer, context

    def _build(self) -> str:
        return (f"Abstract tracer value encountered where concrete value is expected: "
                f"traced array with shape {self.tracer.aval.str_short()}\n{self.context}"
                f"{_tracer_context(self.tracer)}"
                f"\nSee {_DOCS}#jax.errors.ConcretizationTypeError")


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool(tracer)`, e.g. `if x > 0:` on a traced value."""

    def _build(self) -> str:
        return (f"Attempted boolean conversion of traced array with shape "
                f"{self.tracer.aval.str_short()}.{_tracer_context(self.tracer)}"
                f"\nSee {_DOCS}#jax.errors.TracerBoolConversionError")


class TracerIntegerConversionError(JAXTypeError):
    """`int(tracer)` / `operator.index(tracer)`, e.g. `range(n)` with a traced n."""

    def __init__(self, tracer: Any):
        super().__init__()
        self.tracer = tracer

    def _build(self) -> str:
        return (f"The __index__() method was called on traced array with shape "
                f"{self.tracer.aval.str_short()}{_tracer_context(self.tracer)}"
                f"\nSee {_DOCS}#jax.errors.TracerIntegerConversionError")


class TracerArrayConversionError(JAXTypeError):
    """`np.asarray(tracer)`: NumPy cannot see traced values."""

    def __init__(self, tracer: Any):
        super().__init__()
        self.tracer = tracer

    def _build(self) -> str:
        return (f"The numpy.ndarray conversion method __array__() was called on traced array "
                f"with shape {self.tracer.aval.str_short()}{_tracer_context(self.tracer)}"
                f"\nSee {_DOCS}#jax.errors.TracerArrayConversionError")


class NonConcreteBooleanIndexError(JAXIndexError):
    """`x[mask]` with a traced boolean mask: the result shape would depend on data."""

    def __init__(self, tracer: Any):
        super().__init__()
        self.tracer = tracer

    def _build(self) -> str:
        return (f"Array boolean indices must be concrete; got {self.tracer.aval.str_short()}\n"
                f"\nSee {_DOCS}#jax.errors.NonConcreteBooleanIndexError")


_RULE = "-" * 30


def _leak_details(frames: tuple) -> str:
    """JAX's leak paragraph, with the creating line and frames filled in (JAX leaves them empty)."""
    created = str(frames[0]) if frames else ""
    stack = "\n".join(str(f) for f in reversed(frames))
    return (f"{_RULE}\nThe leaked intermediate value was created on line {created}. \n{_RULE}\n"
            "When the value was created, the final 5 stack frames (most recent last) excluding "
            f"JAX-internal frames were:\n{_RULE}\n{stack}\n{_RULE}\n\n"
            "To catch the leak earlier, try setting the environment variable "
            "JAX_CHECK_TRACER_LEAKS or using the `jax.checking_leaks` context manager.")


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped its transformation (saved to a global) and was used afterwards."""

    def __init__(self, tracer: Any, describe: Callable[[], tuple[str, tuple]] | None = None):
        super().__init__()
        self.tracer, self.describe = tracer, describe

    def _build(self) -> str:
        where, frames = self.describe() if self.describe else ("", ())
        return ("Encountered an unexpected tracer. A function transformed by JAX had a side "
                "effect, allowing for a reference to an intermediate value with type "
                f"{self.tracer.aval.str_short()} wrapped in a {type(self.tracer).__name__} to "
                "escape the scope of the transformation.\nJAX transformations require that "
                "functions explicitly return their outputs, and disallow saving intermediate "
                f"values to global state.\n{where}\n{_leak_details(frames)}"
                f"\nSee {_DOCS}#jax.errors.UnexpectedTracerError")


class JaxprTypeError(TypeError):
    """A jaxpr failed type checking (an equation's types do not match its rule)."""


class InconclusiveDimensionOperation(Exception):
    """A shape computation could not be decided (symbolic dimensions)."""


class JaxRuntimeError(RuntimeError):
    """An error raised while running compiled code."""


class MLIRError(Exception):
    """jaxlib's MLIR error (jaxlib.mlir.ir.MLIRError): an operation JAX's lowering builds that
    MLIR's verifier refuses, raised where pyjax compiles the equation."""


class KeyReuseError(JAXTypeError):
    """A PRNG key was used twice while key-reuse checking is on."""


def _mlir_element_type(dtype: Any) -> str:
    import numpy as np
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return f"complex<f{dtype.itemsize * 4}>"
    if dtype.kind == "b":
        return "i1"
    if dtype.name == "bfloat16":
        return "bf16"
    prefix = {"f": "f", "i": "i", "u": "ui"}[dtype.kind]
    return f"{prefix}{dtype.itemsize * 8}"


def mlir_tensor_type(shape: tuple, dtype: Any) -> str:
    """The MLIR type text XLA's verifier prints for an array, e.g. 'tensor<2x4xf32>'."""
    return "tensor<" + "".join(f"{d}x" for d in shape) + _mlir_element_type(dtype) + ">"


def lowering_verifier_error(detail: str) -> ValueError:
    """The ValueError JAX raises when XLA's verifier rejects a program its shape rules let
    through (pyjax checks in the abstract rule; the text is the verifier's first lines)."""
    return ValueError(f"Cannot lower jaxpr with verifier errors:\n\t{detail}")
