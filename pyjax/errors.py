"""pyjax.errors: JAX's public error classes."""
from pyjax._src.errors import (  # noqa: F401
    ConcretizationTypeError, JAXIndexError, JAXTypeError, KeyReuseError,
    NonConcreteBooleanIndexError, TracerArrayConversionError, TracerBoolConversionError,
    TracerIntegerConversionError, UnexpectedTracerError)
