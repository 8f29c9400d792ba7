"""One phase of ingest (read, embed, write) counted and reported to the caller's
`progress(done, total, label)` callback, the contract maintain_indexes() also takes.
Drawing is the caller's business (the CLI's bar is anatid.cli.progress); with no
callback this only counts."""
from __future__ import annotations

from ..errors import ValidationError


def check_sink(progress) -> None:
    """ValidationError unless `progress` is a callable or None (False is accepted as None)."""
    if progress is not None and progress is not False and not callable(progress):
        raise ValidationError("progress", f"expected a callable, got {progress!r}",
                              "progress(done, total, label), or None; the anatid CLI draws a bar on a terminal")


class Progress:
    def __init__(self, total: int, label: str, sink=None):
        self.total, self.label, self.done = total, label.strip(), 0
        self.sink = sink if callable(sink) else None
        if self.sink is not None and total > 0:
            self.sink(0, total, self.label)

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.sink is not None:
            self.sink(self.done, self.total, self.label)

    def close(self) -> None:
        """Kept for the call sites: the phase is over when the next one starts."""
