"""BLAS products (pyjax/_src/primitives/_blas_threads.py, dot.py): a dot_general runs on one
BLAS thread, whole or as pieces shared among threads, the library's own count is restored
after it, and results depend neither on the machine's cores nor on other threads' products
running at the same time."""
import faulthandler
import os
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


def _pieces_on_one_thread(x, y):
    """The rule, written out: a product under 2 * PIECE_FLOPS is one product on one BLAS
    thread; a larger one is pieces(flops) blocks of the batch, else of the result's rows
    (columns when it has more of them; no fewer than 64 in a block), each a product on one
    BLAS thread."""
    *batch, m, k = x.shape
    n = y.shape[-1]
    count = _blas_threads.pieces(2 * int(np.prod(batch, dtype=int)) * m * k * n)
    with threadpool_limits(limits=1, user_api="blas"):
        if not count:
            return np.matmul(x, y)
        if batch:
            step = -(-batch[0] // min(count, batch[0]))
            return np.concatenate([np.matmul(x[a:a + step], y[a:a + step])
                                   for a in range(0, batch[0], step)])
        count = min(count, max(1, max(m, n) // 64))  # blocks of 64 rows (columns) or more
        if m >= n:
            step = -(-m // count)
            return np.concatenate([np.matmul(x[a:a + step], y) for a in range(0, m, step)])
        step = -(-n // count)
        return np.concatenate([np.matmul(x, y[:, a:a + step]) for a in range(0, n, step)],
                              axis=1)


@pytest.mark.parametrize("m,k,n", [(64, 256, 256), (256, 64, 256), (128, 784, 512),
                                   (128, 512, 10), (300, 129, 257), (16, 512, 1500),
                                   (32, 256, 100)])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_product_equals_its_pieces_on_one_blas_thread(m, k, n, dtype):
    """The result is the bits of its pieces, each on one BLAS thread, eager and under jit,
    whatever the machine's cores."""
    x, y = _operands(m, k, n, dtype=dtype)
    expected = _pieces_on_one_thread(x, y)
    eager = np.asarray(lax.dot(x, y))
    jitted = np.asarray(jax.jit(lax.dot)(x, y))
    assert eager.tobytes() == expected.tobytes()
    assert jitted.tobytes() == expected.tobytes()


@pytest.mark.parametrize("batch", [2, 3, 8, 40])
def test_batched_product_equals_its_pieces_on_one_blas_thread(batch):
    rng = np.random.default_rng(batch)
    x = rng.standard_normal((batch, 256, 200)).astype(np.float32)
    y = rng.standard_normal((batch, 256, 200)).astype(np.float32)
    expected = _pieces_on_one_thread(x, np.swapaxes(y, 1, 2))
    got = np.asarray(jax.jit(lambda a, b: a @ jax.numpy.swapaxes(b, 1, 2))(x, y))
    assert got.tobytes() == expected.tobytes()


def test_pieces_taken_by_helpers_flush_subnormals_as_the_caller(monkeypatch):
    """Under jit subnormals are flushed (XLA's CPU mode) in every piece, whichever thread
    computed it: each product 1e-21 * 1e-21 is subnormal, so the whole result is 0; eagerly
    outside pyjax NumPy keeps them."""
    monkeypatch.setattr(_blas_threads, "_room", lambda: True)  # helpers asked, however busy
    x = np.full((512, 512), 1e-21, np.float32)
    for _ in range(3):
        assert not np.asarray(jax.jit(lax.dot)(x, x)).any()
    assert np.dot(x, x).all()


def test_a_failing_piece_is_raised_after_the_others():
    ran = []

    def run(i):
        ran.append(i)
        if i == 3:
            raise ValueError("piece 3")

    with pytest.raises(ValueError, match="piece 3"):
        _blas_threads.shared(8, run)
    assert 3 in ran and len(set(ran)) == len(ran)
    assert _blas_threads._active == 0


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


def _sampled_file(tmp_path, monkeypatch, path_name, state_name):
    """A file in place of the /proc file _blas_threads reads as `path_name` (its windowed
    `state_name` reset) and the clock [seconds] its windows are timed by."""
    path, clock = tmp_path / "proc", [100.0]
    monkeypatch.setattr(_blas_threads, path_name, str(path))
    monkeypatch.setattr(_blas_threads, state_name, [-1.0, -1, True])
    monkeypatch.setattr(_blas_threads.time, "monotonic", lambda: clock[0])
    return path, clock


def test_helpers_are_asked_only_while_the_cpus_have_room(tmp_path, monkeypatch):
    """Linux's CPU pressure, read at most once per window: helpers are asked while some task
    waited for a CPU less than a quarter of the last window, and always where no pressure is
    reported."""
    reported, clock = _sampled_file(tmp_path, monkeypatch, "_PRESSURE", "_pressure")

    def report(total):
        reported.write_text(f"some avg10=0.00 avg60=0.00 avg300=0.00 total={total}\n"
                            "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")

    report(5_000_000)
    assert _blas_threads._room()  # no window yet
    clock[0] += 0.1
    report(5_010_000)  # waited 10 ms of 100
    assert _blas_threads._room()
    clock[0] += 0.1
    report(5_060_000)  # 50 ms of 100
    assert not _blas_threads._room()
    report(5_060_000)
    clock[0] += _blas_threads._WINDOW / 2  # within the window: the answer kept
    assert not _blas_threads._room()
    clock[0] += 0.1
    reported.unlink()
    assert _blas_threads._room()


def test_products_are_deferred_only_while_others_left_a_core(tmp_path, monkeypatch):
    """What other processes left this one (/proc/stat's idle time plus its own CPU time),
    read at most once per window: `defer` hands products to a helper, and `shared` asks
    helpers under CPU pressure, while that was at least 1.5 cores over the last window (this
    process's own threads busy on both cores count as left to it); where idle time is not
    reported, CPU pressure (`_room`) decides."""
    stat, clock = _sampled_file(tmp_path, monkeypatch, "_STAT", "_left_state")
    own = [0.0]
    monkeypatch.setattr(_blas_threads, "_own_seconds", lambda: own[0])
    tick = _blas_threads._TICK

    def report(idle_seconds):  # (user nice system idle iowait ...), in clock ticks
        stat.write_text(f"cpu  500 0 300 {round(idle_seconds / tick) - 10} 10 0 0 0 0 0\n"
                        "cpu0 250 0 150 0 0 0 0 0 0 0\n")

    report(1000.0)
    assert _blas_threads._left()  # no window yet
    clock[0] += 1.0
    own[0] += 2.0  # the caller and a helper kept both cores busy: nothing idle
    assert _blas_threads._left()
    clock[0] += 1.0
    report(1000.6)
    own[0] += 1.0  # the caller and 0.6 of a core idle: another process took the rest
    assert _blas_threads._left()
    clock[0] += 1.0
    report(1000.9)
    own[0] += 1.0  # the caller, another process busy on the other core
    assert not _blas_threads._left()
    clock[0] += _blas_threads._LEFT_WINDOW / 2  # within the window: the answer kept
    report(1010.0)
    assert not _blas_threads._left()
    monkeypatch.setattr(_blas_threads, "_room", lambda: False)
    real_start = _blas_threads._start_helpers
    monkeypatch.setattr(_blas_threads, "_start_helpers", None)  # (a helper asked would fail)
    ran = []
    _blas_threads.shared(2, ran.append)  # the caller took both pieces
    assert ran == [0, 1]
    monkeypatch.setattr(_blas_threads, "_start_helpers", real_start)
    clock[0] += 1.0
    stat.unlink()
    monkeypatch.setattr(_blas_threads, "_room", lambda: True)
    assert _blas_threads._left()
    monkeypatch.setattr(_blas_threads, "_room", lambda: False)
    assert not _blas_threads._left()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_forked_child_runs_products_right_after_a_shared_one(monkeypatch):
    """A fork right after a product shared with a helper (still leaving it) gives a child
    whose products run, with helpers of its own, to the same bits."""
    monkeypatch.setattr(_blas_threads, "_room", lambda: True)
    x, y = _operands(512, 512, 512)
    for _ in range(20):
        expected = np.asarray(lax.dot(x, y))
        pid = os.fork()
        if pid == 0:  # the child: exit 0 when its products match
            faulthandler.dump_traceback_later(60, exit=True)
            same = np.asarray(lax.dot(x, y)).tobytes() == expected.tobytes()
            os._exit(0 if same else 3)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_blas_threads_started_again_after_a_fork_keep_subnormals():
    """OpenBLAS stops its threads at a fork and starts them again at the next change of its
    count: when pyjax changes it around a product, inside an operation that flushes
    subnormals, the threads started then must not inherit the flushing (MXCSR is copied into a
    new thread): the caller's own NumPy products keep subnormals."""
    x, y = _operands(64, 256, 256)
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    lax.dot(x, y)  # eager: flushing, on one BLAS thread, the count restored after it
    a, w = np.full((64, 256), 1e-21, np.float32), np.full((256, 256), 1e-21, np.float32)
    assert np.dot(a, w).all()

def _mlp_grad(depth):
    """jit(grad) of a width-256 batch-64 tanh MLP `depth` layers deep, and its arguments."""
    rng = np.random.default_rng(depth)
    params = [(rng.standard_normal((256, 256)).astype(np.float32) / 16,
               rng.standard_normal(256).astype(np.float32)) for _ in range(depth)]
    x = rng.standard_normal((64, 256)).astype(np.float32)

    def loss(params, x):
        for w, b in params:
            x = jax.numpy.tanh(x @ w + b)
        return jax.numpy.mean(x * x)
    return jax.jit(jax.grad(loss)), (params, x)


class _Dropped:
    """A job queue whose new jobs no helper ever gets: every deferred product waits for its
    caller (helpers still wait on the real queue)."""

    def __init__(self, real):
        self.get = real.get

    def put(self, item):
        pass


@pytest.mark.parametrize("how", ["in order", "helpers", "caller"])
def test_weight_gradients_run_beside_the_gradients_sent_down(monkeypatch, how):
    """A grad step's weight gradients (read by nothing but the return, through a transpose)
    are started on a helper thread while the products of the layers below run; the result has
    the bits of the step computed in order, whoever computed which product: a helper, or the
    caller taking back one no helper had started."""
    f, args = _mlp_grad(3)
    text = f.lower(*args).compile().as_text()
    assert text.count("defer(") == 2  # (the last product has none after it to run beside)
    monkeypatch.setattr(_blas_threads, "_left", lambda: False)
    expected = [np.asarray(g).tobytes() for g in jax.tree_util.tree_leaves(f(*args))]
    if how != "in order":
        monkeypatch.setattr(_blas_threads, "_left", lambda: True)
    if how == "caller":
        monkeypatch.setattr(_blas_threads, "_jobs", _Dropped(_blas_threads._jobs))
    for _ in range(5):
        got = [np.asarray(g).tobytes() for g in jax.tree_util.tree_leaves(f(*args))]
        assert got == expected
    assert _blas_threads._active == 0


def test_a_failing_deferred_product_raises_when_its_result_is_taken(monkeypatch):
    monkeypatch.setattr(_blas_threads, "_left", lambda: True)

    def fail():
        raise ValueError("product")

    pending = _blas_threads.defer(fail)
    with pytest.raises(ValueError, match="product"):
        pending.result()
    assert _blas_threads.defer(lambda a: a + 1, 1).result() == 2


def test_deferred_products_flush_subnormals_as_the_caller(monkeypatch):
    """A product started on a helper flushes subnormals as the jit call does (MXCSR is per
    thread): each of its terms 1e-21 * 1e-21 is subnormal, so the result is 0."""
    monkeypatch.setattr(_blas_threads, "_left", lambda: True)
    a, w = np.full((64, 256), 1e-21, np.float32), np.full((256, 256), 1e-21, np.float32)
    f = jax.jit(lambda a, w: (a @ w, (a + 1) @ w))
    assert "defer(" in f.lower(a, w).compile().as_text()
    for _ in range(3):
        assert not np.asarray(f(a, w)[0]).any()
    assert np.dot(a, w).all()
