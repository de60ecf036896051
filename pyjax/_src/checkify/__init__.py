"""`jax.experimental.checkify` (and the names JAX's `jax._src.checkify` module has that
libraries reach for): functionalized run-time checks."""
from pyjax._src.checkify.check import (  # noqa: F401
    check, check_error, check_p, debug_check)
from pyjax._src.checkify.errors import (  # noqa: F401
    BatchedError, DivisionByZeroError, Error, ErrorCategory, ErrorEffect, FailedCheckError,
    JaxException, JaxRuntimeError, NaNError, OOBError, Out, all_checks, assert_func,
    automatic_checks, div_checks, float_checks, get_traceback, index_checks, init_error,
    nan_checks, update_error, user_checks)
from pyjax._src.checkify.interpreter import (  # noqa: F401
    ErrorCheckRule, checkify, checkify_jaxpr, check_nans, error_checks, nan_error_check,
    oob_payload)
