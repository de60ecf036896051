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


#: void fn(int64 rows, int64 cols, void **p): p[0][0] = rows; p[1][0] = cols; p[2][0] += 1
#: (int64 elements), as x86-64 code: mov (%rdx),%rax; mov %rdi,(%rax); mov 8(%rdx),%rax;
#: mov %rsi,(%rax); mov 16(%rdx),%rax; addq $1,(%rax); ret
_RECORDING_KERNEL = bytes.fromhex("488b02488938488b4208488930488b421048830001c3")


@pytest.mark.skipif(machine_code.UNAVAILABLE is not None, reason=f"{machine_code.UNAVAILABLE}")
def test_kernel_caller_passes_rows_columns_and_buffers_in_order() -> None:
    params = np.array([machine_code.code_address(_RECORDING_KERNEL), 7, 11], np.int64)
    call = machine_code.kernel_caller(params)
    rows, cols = np.zeros(2, np.int64), np.zeros(3, np.int64)
    counter = np.array([41, 5], np.int64)[1:]  # a view: its own data pointer
    before = sys.getrefcount(counter)
    for _ in range(3):
        result = call(rows, cols, counter)
    assert result is counter and sys.getrefcount(counter) == before + 1
    assert rows.tolist() == [7, 0] and cols.tolist() == [11, 0, 0] and counter.tolist() == [8]
    del params  # the builtin keeps its parameters alive
    call(rows, cols, counter)
    assert counter.tolist() == [9]
