"""Group commit: concurrent remember() calls on one handle share one durable transaction.

One remember costs a statement per table it appends to plus a commit (an fsync), whatever
it carries; eight remembers written with bound lists cost about the same statements and one
commit. So when several threads remember at once, a caller that finds fewer than LEADERS
groups being written leads: it takes every call queued at that moment, writes them in one transaction and
commits; the calls that arrive meanwhile queue up and the next leader takes them as the
next group. A thread alone is always a group of one, written by the plain remember path.

Semantics (docs/limitations.md, "Group commit"):
* each call returns only after the commit holding its memory is durable, so an acknowledged
  remember survives a crash like any other committed transaction;
* a group shares one transaction instant (tx_from) and every row is what remember() writes;
* a group that meets a retryable conflict (another group created the same new entity) is
  rolled back and written again, up to CONFLICT_RETRIES times;
* a group that fails otherwise (a bad episode id, a disk error) is rolled back whole and
  each of its calls is then run alone, in a transaction of its own: the failing call gets
  its own error and the others are committed by their own commits (never lost, never
  written twice: the group's rows were rolled back before the retry).
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from .errors import ConflictError

MAX_GROUP = 256  # calls per group: bounds a group's transaction (and the leader's wait)
# Groups written at once, each on its leader's own cursor: DuckDB runs the two
# transactions' statements in parallel (appends do not conflict), so while one group waits
# for its fsync or for Python's lock the other's statements run. Two against one, 2 cores,
# quiet machine (benchmark/results/write_shape-leaders.json): 231.6 against 175.1/s at 2
# writer threads, 313.6 against 251.4 at 4, equal at 8. Two groups first naming the same
# new entity conflict at the second's commit: both are retried alone, and a call that
# conflicts again gets the retryable ConflictError as before group commit. A large number
# turns grouping off (every call its own transaction): the benchmark's baseline.
LEADERS = max(1, min(2, os.cpu_count() or 1))


@dataclass
class _Call:
    """One queued remember: its validated arguments, how to write it alone, and its outcome."""
    args: tuple
    alone: Callable[[], Any]
    result: Any = None
    error: BaseException | None = None
    taken: bool = False   # in a group a leader is writing: its caller waits for it to be done
    done: bool = False


@dataclass
class GroupStats:
    groups: int = 0          # transactions committed by leaders (a group of one included)
    grouped_calls: int = 0   # calls written in a group of two or more
    retried_alone: int = 0   # calls of a failed group that were run alone
    largest: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class GroupCommit:
    """The queue of one Store's pending remembers, and the leader election over it."""

    def __init__(self, write_group: Callable[[list[tuple]], list[Any]], leaders: int = LEADERS) -> None:
        self._write_group = write_group   # validated args of 2+ calls -> their results, one transaction
        self._cv = threading.Condition()
        self._queue: list[_Call] = []
        self._leaders = leaders
        self._leading = 0                 # groups being written now
        self.stats = GroupStats()

    def submit(self, args: tuple, alone: Callable[[], Any]) -> Any:
        """Queue one call; return its result (or raise its error) once its commit is durable."""
        call = _Call(args, alone)
        with self._cv:
            self._queue.append(call)
        while True:
            with self._cv:
                while not call.done:
                    if not call.taken and self._leading < self._leaders:
                        # still queued: lead the group at the head of the queue (its own call is
                        # in it unless MAX_GROUP calls are ahead: then it loops and leads again)
                        self._leading += 1
                        group, self._queue = self._queue[:MAX_GROUP], self._queue[MAX_GROUP:]
                        for c in group:
                            c.taken = True
                        break
                    self._cv.wait()
                else:
                    return _outcome(call)
            try:
                self._lead(group)
            finally:
                with self._cv:
                    self._leading -= 1
                    for c in group:   # a BaseException mid-group: no caller waits for ever
                        if not c.done:
                            c.error, c.done = c.error or RuntimeError("the group's leader was interrupted"), True
                    self._cv.notify_all()

    def _lead(self, group: list[_Call]) -> None:
        if len(group) > 1:
            try:
                results = _retrying(lambda: self._write_group([c.args for c in group]))
            except Exception:
                results = None
            if results is not None:
                for c, r in zip(group, results):
                    c.result, c.done = r, True
                self._count(len(group), grouped=True)
                return
            with self.stats._lock:
                self.stats.retried_alone += len(group)
        for c in group:   # a group of one, or a failed group's calls: each in its own transaction
            try:
                c.result = _retrying(c.alone)
            except Exception as exc:
                c.error = exc
            c.done = True
            self._count(1, grouped=False)

    def _count(self, n: int, grouped: bool) -> None:
        with self.stats._lock:
            self.stats.groups += 1
            self.stats.largest = max(self.stats.largest, n)
            if grouped:
                self.stats.grouped_calls += n

    @contextmanager
    def held(self) -> Iterator[Callable[[], int]]:
        """For tests: no group starts inside the block (calls queue up); yields a function
        giving the queue's length. The first call queued after the block leads them all."""
        with self._cv:
            while self._leading:
                self._cv.wait()
            self._leading = self._leaders
        try:
            yield lambda: len(self._queue)
        finally:
            with self._cv:
                self._leading = 0
                self._cv.notify_all()


CONFLICT_RETRIES = 3


def _retrying(write: Callable[[], Any]) -> Any:
    """write(), again after a retryable conflict: two groups written at once that first name
    the same new entity conflict at the second one's commit, which was rolled back whole,
    and by then the first one's entity is committed (the rerun finds it)."""
    for attempt in range(CONFLICT_RETRIES):
        try:
            return write()
        except ConflictError as exc:
            if not exc.retryable or attempt == CONFLICT_RETRIES - 1:
                raise


def _outcome(call: _Call) -> Any:
    if call.error is not None:
        raise call.error
    return call.result
