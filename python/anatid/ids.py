"""Ids unique per file, allocated in the process that writes the file.

An id is `(milliseconds since 2020-01-01) << 20 | counter`, so ids grow with
time (newest last), never repeat within a file (DuckDB admits one writing
process per file and the allocator is shared by every handle on the same
file in this process), and exceed 2**53: every integration must carry them
as decimal strings, which the tests enforce.
"""
from __future__ import annotations

import threading
import time

_EPOCH_MS = 1_577_836_800_000  # 2020-01-01T00:00:00Z
_SHIFT = 20


class IdAllocator:
    def __init__(self, floor: int) -> None:
        self._lock = threading.Lock()
        self._last = floor

    def bump_floor(self, floor: int) -> None:
        with self._lock:
            self._last = max(self._last, floor)

    def take(self, n: int = 1) -> list[int]:
        with self._lock:
            base = (int(time.time() * 1000) - _EPOCH_MS) << _SHIFT
            start = max(base, self._last + 1)
            self._last = start + n - 1
            return list(range(start, start + n))


_registry: dict[str, IdAllocator] = {}
_registry_lock = threading.Lock()


def allocator_for(key: str, floor: int) -> IdAllocator:
    with _registry_lock:
        alloc = _registry.get(key)
        if alloc is None:
            alloc = _registry[key] = IdAllocator(floor)
        else:
            alloc.bump_floor(floor)
        return alloc
