"""BLAS threads per product (pyjax/_src/primitives/_blas_threads.py): a dot_general runs on
max(1, flops // FLOPS_PER_THREAD) BLAS threads, the library's own count is restored after
it, and results do not depend on other threads' products running at the same time."""
import threading

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController, threadpool_limits

import pyjax as jax
from pyjax import lax
from pyjax._src.primitives import _blas_threads

BLAS = ThreadpoolController().select(user_api="blas").lib_controllers


def _counts():
    return [lib.num_threads for lib in BLAS]


def _operands(m, k, n, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k)).astype(dtype),
            rng.standard_normal((k, n)).astype(dtype))


@pytest.mark.parametrize("m,k,n", [(64, 256, 256), (256, 64, 256), (128, 784, 512),
                                   (128, 512, 10), (300, 129, 257)])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_product_equals_blas_at_the_rule_s_thread_count(m, k, n, dtype):
    """The result is the BLAS's at max(1, flops // FLOPS_PER_THREAD) threads (at most its
    own count): bit for bit, eager and under jit."""
    x, y = _operands(m, k, n, dtype=dtype)
    want = min(max(1, 2 * m * k * n // _blas_threads.FLOPS_PER_THREAD), *_counts())
    with threadpool_limits(limits=want, user_api="blas"):
        expected = np.dot(x, y)
    eager = np.asarray(lax.dot(x, y))
    jitted = np.asarray(jax.jit(lax.dot)(x, y))
    assert eager.tobytes() == expected.tobytes()
    assert jitted.tobytes() == expected.tobytes()


def test_thread_count_is_restored_after_products_and_errors():
    before = _counts()
    x, y = _operands(64, 256, 256)
    lax.dot(x, y)
    assert _counts() == before
    with threadpool_limits(limits=1, user_api="blas"):  # the user's own setting is kept
        lax.dot(x, y)
        assert _counts() == [1] * len(BLAS)
    assert _counts() == before
    with pytest.raises(ValueError):  # a failing product leaves the count as it was
        restore = _blas_threads.enter(2 * 64 * 256 * 256)
        try:
            raise ValueError
        finally:
            _blas_threads.leave(restore)
    assert _counts() == before and _blas_threads._active == 0


def test_concurrent_products_match_sequential_ones():
    """Small and large products from 8 threads at once give the bits they give alone."""
    shapes = [(64, 256, 256), (512, 512, 512), (128, 512, 10), (256, 512, 512)] * 2
    ops = [_operands(*s, seed=i) for i, s in enumerate(shapes)]
    alone = [np.asarray(lax.dot(x, y)) for x, y in ops]
    results = [[] for _ in ops]

    def work(i):
        for _ in range(5):
            results[i].append(np.asarray(lax.dot(*ops[i])))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(ops))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for expected, got in zip(alone, results):
        assert all(r.tobytes() == expected.tobytes() for r in got)
    assert _blas_threads._active == 0 and not _blas_threads._waiting


def test_first_product_warms_openblas_on_one_thread(monkeypatch):
    """The first lookup of the libraries runs one float64 product on one BLAS thread when
    OpenBLAS is loaded (its packing buffer written once: later small float32 products run
    at full speed), and leaves every library's count as it was."""
    if not any(lib.internal_api == "openblas" for lib in BLAS):
        pytest.skip("no OpenBLAS loaded")
    seen = []

    def product(x, y):
        seen.append((x.shape, y.shape, x.dtype, _counts()))
        return np.dot(x, y)

    monkeypatch.setattr(_blas_threads, "_libs", None)
    monkeypatch.setattr(_blas_threads, "_np_dot", product)
    before = _counts()
    _blas_threads._blas()
    _blas_threads._blas()  # once per process
    assert seen == [((128, 256), (256, 512), np.dtype(np.float64),
                     [1 if lib.threading_layer != "openmp" else n
                      for lib, n in zip(BLAS, before)])]
    assert _counts() == before
