"""Progress for long commands: a rich bar on stderr, drawn only when stderr is a terminal.

`with terminal_progress() as progress:` yields the `progress(done, total, label)` callback
that long-running verbs accept (maintain_indexes, ingest_vault). A count that starts over
starts a new bar (ingest's read, embed and write phases); a total of None shows a spinner. When
stderr is a pipe, a file or a CI log, the callback does nothing and nothing is written.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager


def _is_tty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class _Bars:
    def __init__(self, stream):
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                                   TimeElapsedColumn)
        # force_terminal: the caller checked isatty; rich's own guess also reads env variables
        console = Console(file=stream, force_terminal=True, highlight=False, markup=False, emoji=False)
        self._rich = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                              MofNCompleteColumn(), TimeElapsedColumn(), console=console)
        self._task = None

    def __enter__(self):
        self._rich.start()
        return self

    def __exit__(self, *exc) -> None:
        self._rich.stop()

    def __call__(self, done: int, total: int | None = None, label: str = "") -> None:
        label = label.strip()
        task = self._rich.tasks[-1] if self._task is not None else None
        # a count that starts over or a new total is a new phase (ingest's read, embed, write);
        # a new label on the same count names the current step (maintain's "text index")
        if task is None or total != task.total or done < task.completed:
            self._finish(task)
            self._task = self._rich.add_task(label, total=total)
        self._rich.update(self._task, completed=done, total=total, description=label)

    def _finish(self, task) -> None:
        if task is not None and task.total is not None:
            self._rich.update(task.id, completed=task.total)


def _silent(done: int, total: int | None = None, label: str = "") -> None:
    """Progress for a pipe: nothing."""


@contextmanager
def terminal_progress(stream=None, *, enabled: bool = True):
    """The progress callback: bars on `stream` (default stderr) when it is a terminal, else silent."""
    stream = sys.stderr if stream is None else stream
    if not (enabled and _is_tty(stream)):
        yield _silent
        return
    with _Bars(stream) as bars:
        yield bars
