"""pyjax.errors: JAX's public error classes."""
from pyjax._src.errors import (  # noqa: F401
    ConcretizationTypeError, InconclusiveDimensionOperation, JAXIndexError, JAXTypeError,
    JaxprTypeError, JaxRuntimeError, KeyReuseError,
    NonConcreteBooleanIndexError, TracerArrayConversionError, TracerBoolConversionError,
    TracerIntegerConversionError, UnexpectedTracerError)
