"""`jax.custom_derivatives`: the custom-rule API and its call primitives (the rules live in
transforms/custom_derivatives.py)."""
from pyjax._src.transforms.custom_derivatives import (  # noqa: F401  (re-exported)
    CustomVJPPrimal, SymbolicZero, closure_convert, custom_gradient, custom_jvp,
    custom_jvp_call_p, custom_vjp, custom_vjp_call_p, custom_vjp_primal_tree_values,
    zero_from_primal)
from pyjax._src.primitives.linear_call import linear_call, linear_call_p  # noqa: F401

__all__ = ["CustomVJPPrimal", "SymbolicZero", "closure_convert", "custom_gradient",
           "custom_jvp", "custom_jvp_call_p", "custom_vjp", "custom_vjp_call_p",
           "custom_vjp_primal_tree_values", "linear_call", "linear_call_p", "zero_from_primal"]
