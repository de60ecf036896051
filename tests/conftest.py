"""Shared test settings: hypothesis profile, and a fixture to run a test with x64 on."""
import os

import pytest
from hypothesis import settings

import pyjax

settings.register_profile("pyjax", max_examples=60, deadline=None)
settings.load_profile("pyjax")
# Type-check every jaxpr the tests stage (pyjax._src.core.check).
pyjax.config.update("jax_enable_checks", True)

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "shared")


@pytest.fixture
def x64():
    """Enable jax_enable_x64 for one test, restoring the previous value afterwards."""
    previous = pyjax.config.x64
    pyjax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        pyjax.config.update("jax_enable_x64", previous)
