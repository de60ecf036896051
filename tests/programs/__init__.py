"""Whole user programs run under both real JAX (by the oracle recorders) and pyjax (by tests)."""
