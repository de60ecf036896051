"""ProfileData, ProfilePlane, ProfileEvent: a collected trace read back in JAX's shape (planes
holding lines holding events).  pyjax's traces are Chrome trace-event JSON (recorder.py), so
these read that format, not XLA's XSpace: one plane per process (`/host:CPU`), one line per
thread (named as the trace names it), events with their start, duration and arguments."""
from __future__ import annotations

import gzip
import json
import os
from typing import Any, Iterator


class ProfileEvent:
    """One event: `name`, `start_ns`, `duration_ns`, `end_ns`, and `stats` (its arguments as
    (name, value) pairs)."""

    def __init__(self, raw: dict):
        self.name = raw["name"]
        self.start_ns = float(raw.get("ts", 0.0)) * 1e3
        self.duration_ns = float(raw.get("dur", 0.0)) * 1e3
        self.end_ns = self.start_ns + self.duration_ns
        self._args = raw.get("args", {})

    @property
    def stats(self) -> Iterator[tuple[str, Any]]:
        return iter(self._args.items())

    def __repr__(self) -> str:
        return f"ProfileEvent({self.name!r}, start_ns={self.start_ns}, " \
               f"duration_ns={self.duration_ns})"


class ProfileLine:
    """The events of one thread, in start order."""

    def __init__(self, name: str, events: list[ProfileEvent]):
        self.name = name
        self._events = sorted(events, key=lambda e: e.start_ns)

    @property
    def events(self) -> Iterator[ProfileEvent]:
        return iter(self._events)


class ProfilePlane:
    """The lines of one process."""

    def __init__(self, name: str, lines: list[ProfileLine], stats: dict):
        self.name, self._lines, self._stats = name, lines, stats

    @property
    def lines(self) -> Iterator[ProfileLine]:
        return iter(self._lines)

    @property
    def stats(self) -> Iterator[tuple[str, Any]]:
        return iter(self._stats.items())

    def find_line_by_name(self, name: str) -> ProfileLine | None:
        return next((line for line in self._lines if line.name == name), None)


class ProfileData:
    """A trace written by `jax.profiler` (pyjax's trace-event JSON, gzipped or not)."""

    def __init__(self, document: dict):
        by_pid: dict[Any, dict] = {}
        for raw in document.get("traceEvents", []):
            proc = by_pid.setdefault(raw.get("pid"), {"name": str(raw.get("pid")),
                                                       "threads": {}, "events": {}})
            if raw.get("ph") == "M":
                if raw.get("name") == "process_name":
                    proc["name"] = raw["args"]["name"]
                elif raw.get("name") == "thread_name":
                    proc["threads"][raw.get("tid")] = raw["args"]["name"]
            elif raw.get("ph") == "X":
                proc["events"].setdefault(raw.get("tid"), []).append(ProfileEvent(raw))
        self._planes = [
            ProfilePlane(p["name"], [ProfileLine(p["threads"].get(tid, str(tid)), events)
                                     for tid, events in p["events"].items()],
                         document.get("metadata", {}))
            for p in by_pid.values()]

    @classmethod
    def from_serialized_xspace(cls, data: bytes) -> "ProfileData":
        """From a trace file's bytes (pyjax's JSON; gzipped or not)."""
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        return cls(json.loads(data))

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "ProfileData":
        """From a trace file (`<host>.trace.json.gz` under plugins/profile/<run>/)."""
        with open(path, "rb") as f:
            return cls.from_serialized_xspace(f.read())

    @property
    def planes(self) -> Iterator[ProfilePlane]:
        return iter(self._planes)

    def find_plane_with_name(self, name: str) -> ProfilePlane | None:
        return next((p for p in self._planes if p.name == name), None)
