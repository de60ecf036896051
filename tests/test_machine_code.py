"""backend/machine_code.py: builtins over a few x86-64 instructions (where they can run)."""
import sys

import numpy as np
import pytest

from pyjax._src.backend import machine_code


@pytest.mark.skipif(machine_code.UNAVAILABLE is not None, reason=f"{machine_code.UNAVAILABLE}")
def test_data_pointer_is_a_builtin() -> None:
    assert type(machine_code.data_pointer).__name__ == "builtin_function_or_method"


def test_data_pointer_matches_the_array_interface() -> None:
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    frozen = np.arange(3.0)
    frozen.setflags(write=False)
    for a in (base, base[1:], base[:, 2:], base.T, np.array(5, np.uint32), frozen,
              np.empty(0), np.broadcast_to(np.float32(1), (3, 3))):
        address = machine_code.data_pointer(a)
        assert address == a.__array_interface__["data"][0]
        assert sys.getrefcount(address) == 2  # a new reference, owned by `address` alone
